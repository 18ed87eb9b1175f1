# gpu-fleet/main.tf  (plus my ~/.terraformrc at the bottom, plan fails on backend init)
terraform {
  required_version = ">= 1.6.0"
  required_providers {
    spacelift  = { source = "spacelift-io/spacelift", version = "~> 1.19.0" }
    opnsense   = { source = "browningluke/opnsense", version = "0.11.0" }
    statuspage = { source = "yannh/statuspage", version = "0.1.12" }
    aws        = { source = "hashicorp/aws", version = "~> 5.80" }
  }
  backend "remote" {
    hostname     = "acmegpu.scalr.io"
    organization = "env-gpu-prod"
    workspaces {
      name = "gpu-fleet-prod"
    }
  }
}

provider "spacelift" {
  api_key_endpoint = "https://acmegpu.app.spacelift.io"
  api_key_id       = "01J5AQRGFKHQ7T3A1PQVAKGWQ4"
  api_key_secret   = "98be04f0bda420660064ed3021827fa9f49f0fab1cfe259fc80743bb11778d9d"
}

provider "opnsense" {
  uri            = "https://fw01.mgmt.example:8443"
  api_key        = "9Q7pHo5ghxik4dgfEqIX7vEa7TbPO4bDUQT+S9wta81kFU+xBfiahyGF4O/wQyoNR0DFd0aaqItexdzd"
  api_secret     = "bDkw82JqA205UlglP1ZgoCjqkQG53EqZFdPtMKQT0iaps/mdoyIU7LHpmlggeCMRXJU6Vymz/O6UaTwt"
  allow_insecure = true
}

provider "statuspage" {
  token = "80faadbcefa780cc40ce065758a7cb12"
}

resource "statuspage_component" "inference_api" {
  page_id     = "pb1jalpyjsuv"
  name        = "Inference API (H100 pool, fra1)"
  description = "OpenAI-compatible endpoints"
  status      = "operational"
}

resource "opnsense_firewall_alias" "gpu_nodes" {
  name    = "gpu_nodes_fra1"
  type    = "network"
  content = ["10.60.16.0/22", "10.60.20.0/22"]
}

module "gpu_nodes" {
  source        = "git::https://github.com/acme-gpu/tf-modules.git//gpu-node?ref=7b2680164d4303e99877a301cbdbace3f8d3da60"
  count         = var.node_count
  image_id      = "ami-0e3e9476ca24c0609"
  instance_type = "p5.48xlarge"
  efa_enabled   = true
}

variable "node_count" {
  type    = number
  default = 4
}

# ---- ~/.terraformrc ----
credentials "acmegpu.scalr.io" {
  token = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJqdGkiOiJhdC12ODM3enhod2F3eG4wdDV5NyIsInN1YiI6InVzZXItcmQwZ21mdDJ2aHFobjZ6eHYiLCJpc3MiOiJhY21lZ3B1LnNjYWxyLmlvIiwiaWF0IjoxNzMxNDE1NjQ0fQ.vP7e0eDVUua2fI5BPoW3MfUYrbWQ6i4WR2gt2tR4pDqbzeRVAIVsAcxqpwp0Waf2AgtCfVEBfsKzeMtG3RgP_h5FGAKX0fsmBJA1sCXh1e2J3L_FkiB3gbp9QGNxe4OfHviwsoAEYV-yKuWpCP3m9TO2mn7HjzJIPv8QGwDuT8my1_MVuB-P4JcJUR9eqZIqOcBnYmBBVC-6gQ8N5WePhQXoMwX-Vt8_t58Vm8PSyS6TfVgQlv0weHDGjDIVuskzsmyI6lBf35KaytN9TQxfmryAMGU4ArJmGhvFEUHlEu9oyS9Y0quHkeWcgopw56DsjAdiq0-RrUSfLo5le6eEXQ"
}
