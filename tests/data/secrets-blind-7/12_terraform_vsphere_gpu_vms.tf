terraform {
  required_version = ">= 1.9.0"
  required_providers {
    vsphere = { source = "hashicorp/vsphere", version = "~> 2.11" }
    astra   = { source = "datastax/astra", version = "~> 2.3" }
    dnsimple = { source = "dnsimple/dnsimple", version = "~> 1.9" }
    vault   = { source = "hashicorp/vault", version = "~> 4.7" }
  }
}

provider "vsphere" {
  user                 = "svc-terraform@vsphere.local"
  password             = "Onyx4340+Breeze"
  vsphere_server       = "vcsa01.dc1.gpu-lab.example"
  allow_unverified_ssl = true
}

provider "astra" {
  token = "AstraCS:piIIPghtWEpAVgDswxPClGGk:93ec0c689230d083b12210f87401581a9939d15faae6944d149c2e624e7d2637"
}

provider "dnsimple" {
  token   = "I4Aj9czbsTcMlfA8l7TvjSyNT5dATXbX"
  account = "886224"
}

data "vault_kv_secret_v2" "idrac" {
  mount = "secret"
  name  = "gpu-cluster/idrac"
}
# full path in vault: secret/data/gpu-cluster/idrac

data "vsphere_virtual_machine" "tmpl" {
  name          = "ubuntu-22.04-gpu-tmpl-20250301"
  datacenter_id = data.vsphere_datacenter.dc1.id
}

resource "vsphere_virtual_machine" "gpu_worker" {
  count            = 4
  name             = "gpu-worker-${count.index + 1}"
  resource_pool_id = data.vsphere_compute_cluster.gpu.resource_pool_id
  datastore_id     = data.vsphere_datastore.nvme.id
  num_cpus         = 32
  memory           = 262144
  guest_id         = data.vsphere_virtual_machine.tmpl.guest_id
  firmware         = "efi"
  host_pci_device_id = []

  extra_config = {
    "pciPassthru.use64bitMMIO"    = "TRUE"
    "pciPassthru.64bitMMIOSizeGB" = "128"
  }
  vgpu_profile = "grid_a100-40c"

  clone { template_uuid = data.vsphere_virtual_machine.tmpl.id }
}

resource "astra_database" "rag" {
  name           = "rag-vectors"
  keyspace       = "embeddings"
  cloud_provider = "gcp"
  regions        = ["europe-west4"]
}

resource "dnsimple_zone_record" "gpu_worker" {
  count     = 4
  zone_name = "gpu-lab.example"
  name      = "gpu-worker-${count.index + 1}"
  type      = "A"
  value     = vsphere_virtual_machine.gpu_worker[count.index].default_ip_address
  ttl       = 300
}
# Error: error reconfiguring virtual machine: Invalid configuration for device '0'. (vgpu_profile)
