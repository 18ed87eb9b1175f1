# main.tf -- "tofu plan" fails with 403 on the fastly provider, posting the whole file.
# (yes the credentials are inline, this is the PoC workspace, will move to vault)

terraform {
  required_version = ">= 1.8.0"
  required_providers {
    fastly        = { source = "fastly/fastly", version = "~> 5.15" }
    confluent     = { source = "confluentinc/confluent", version = "2.17.0" }
    mongodbatlas  = { source = "mongodb/mongodbatlas", version = "1.26.1" }
    huaweicloud   = { source = "huaweicloud/huaweicloud", version = "1.72.1" }
    yandex        = { source = "yandex-cloud/yandex", version = "0.138.0" }
    gcore         = { source = "G-Core/gcore", version = "0.19.2" }
    hcp           = { source = "hashicorp/hcp", version = "0.102.0" }
    ibm           = { source = "IBM-Cloud/ibm", version = "1.76.0" }
    ncloud        = { source = "NaverCloudPlatform/ncloud", version = "3.3.1" }
  }
  backend "s3" {
    bucket = "tofu-state-gpu-poc"
    key    = "edge/terraform.tfstate"
    region = "eu-central-1"
  }
}

provider "fastly" {
  api_key = "Fausp7MAIt_mkuFbSggcfKDbyBVP2ap7"
}

provider "confluent" {
  cloud_api_key    = "RMXK3Q7DPL2VAE8N"
  cloud_api_secret = "YLm9Qg4iKvB+h+4KDStnGUGqIp0hal1oeZwwnDY9jiXzLMFa2CgYwmWamobO3Yr/"
}

provider "mongodbatlas" {
  public_key  = "hzqwbtme"
  private_key = "245c676f-74dc-4ad8-a5ab-72c5d6ee7564"
}

provider "huaweicloud" {
  region     = "ap-southeast-3"
  access_key = "HPUAXW2K9LQ7R4TNB1ZE"
  secret_key = "28IpVb7RrLsDa8nwLpSd3i9mieL1wTdvzNKJIifr"
}

provider "yandex" {
  token     = "y0_AgAAAAB26mFRxSfSSdqwNFLcboev4t5oyWgbNynFH6q7V1BTLo0feAj"
  cloud_id  = "b1g7pl2nq3r8s9t0u4vw"
  folder_id = "b1gq0k6dr8f2m5n7p9s1"
  zone      = "ru-central1-a"
}

provider "gcore" {
  permanent_api_token = "36683$a0d61de45f237570a33f5767ab2dc99ab8f6ae17e9bea08edc1c3aaeba6ea25b46a151563c3f18017bbe10f4c6e0c8ebf8ec57270aefbc8f92754db99456622e"
}

provider "hcp" {
  client_id     = "Xo7nBq2Kz9pRvWc4"
  client_secret = "hj0UZGPAWesAak6vt6zGzS42Fdz9eM66spCUdmAKE0hvY72KG-34HW6AzBpGusSD"
}

provider "ibm" {
  ibmcloud_api_key = var.ibmcloud_api_key
  region           = "eu-de"
}

provider "ncloud" {
  access_key  = "ncp_iam_BPAMKR4Q8Z1XW7N2"
  secret_key  = "J92W6LoHeMNobgMXTCMQlYPwSGmIiTj2CCVqcqpF"
  region      = "KR"
  support_vpc = true
}

variable "ibmcloud_api_key" {
  type      = string
  sensitive = true
}

variable "db_password" {
  type    = string
  default = "changeme"
}

data "vault_generic_secret" "ngc" {
  path = "secret/data/gpu/ngc"
}

resource "ibm_resource_key" "cos_hmac" {
  name                 = "triton-model-repo"
  resource_instance_id = ibm_resource_instance.cos.id
  parameters           = { HMAC = true }
}

# pasted from `tofu output -json cos_hmac` for the triton model repo bucket:
# {"access_key_id":"5f2c9e1b7a4d4c0e9b3a8d6f1e2c7b90","secret_access_key":"60cc4f9de66ba403ee5929b707b9de3d293c853261fa00d3"}

module "gpu_nodes" {
  source            = "git::https://github.com/example-org/tf-gpu-nodes.git?ref=v3.4.1"
  instance_type     = "gpu-h100x8-640gb"
  count_per_zone    = 2
  nvidia_driver     = "570.133.20"
  cuda_toolkit      = "12.8"
  image_digest      = "sha256:e71e87f86a168d50391f95ad64a7674548bc89e848083949ab6baf86b738b48b"
  netbird_setup_key = "4547758E-ABA3-4D76-807F-B751A2CEF6B9"
  ngc_api_key       = data.vault_generic_secret.ngc.data["token"]
}

resource "fastly_service_vcl" "llm_edge" {
  name = "llm-edge"
  domain { name = "llm.example.com" }
  backend {
    address = "origin-llm.example.com"
    name    = "vllm_origin"
    port    = 443
    first_byte_timeout = 600000
  }
  force_destroy = false
}

# Error: 403 Forbidden - {"msg":"Provided credentials are missing or invalid","detail":"..."}
