# main.tf -- terraform plan shows "Error: 401 Unauthorized" from the proxmox provider only,
# OVH + Tencent + OpenStack parts plan fine. Versions: terraform 1.9.8
terraform {
  required_providers {
    proxmox = {
      source  = "bpg/proxmox"
      version = "~> 0.66"
    }
    ovh = {
      source  = "ovh/ovh"
      version = "0.51.0"
    }
    tencentcloud = {
      source = "tencentcloudstack/tencentcloud"
    }
    openstack = {
      source = "terraform-provider-openstack/openstack"
    }
    exoscale = {
      source = "exoscale/exoscale"
    }
  }
}

provider "proxmox" {
  endpoint  = "https://pve-mgmt01.dc2.lab.veldmark.internal:8006/"
  api_token = "terraform@pve!provisioner=719dae1b-e6ae-4ce6-b7b4-b7e615129274"
  insecure  = false
}

provider "ovh" {
  endpoint           = "ovh-eu"
  application_key    = "var.ovh_application_key"
  application_secret = "qCWmgGIVRkwk8dvD5ciTZ7e0QRKPNEIW"
  consumer_key       = "xO3wT5GDKqyHlaD7hskivSl7SJJU5E54"
}

provider "tencentcloud" {
  secret_id  = "AKIDcjtsHOtugL0kByLKhEbpmYeRvwO4fAqO"
  secret_key = "cl160krT3b1b845fApvujzTzHvShbs8W"
  region     = "ap-guangzhou"
}

provider "openstack" {
  auth_url                      = "https://auth.cloud.ovh.net/v3"
  application_credential_id     = "12c4dfdf9aba8a68d9c7ccfa83b77968"
  application_credential_secret = "QdnvNmzTVTkU73_70BdVSeQSb6LK9_ctaBE_SbMmnV5AKCS3a4P5DYp192ID8H0J3elZNE_hNe3AOqtwm6ME6L"
  region                        = "GRA11"
}

provider "exoscale" {
  key    = "EXOe1e7bfa8c046b8e4df89e363"
  secret = "ZrbZOseoTjdgnKJnMh58WqL4jAnWaVjzx9oaDamfwX6"
}

variable "ovh_application_secret" {
  type      = string
  sensitive = true
}

variable "lambda_api_key" {
  description = "Lambda Cloud key for the burst pool"
  type        = string
  default     = "secret_burst-pool_4d2f63d1dda2ac1b4c732bd4cc8c4a4c.eKOk9iV8z0Jm2wUd0rfWx1sZHewOkECc"
}

resource "tencentcloud_instance" "gpu" {
  instance_name     = "trainer-gn10x"
  instance_type     = "GN10Xp.20XLARGE320"
  image_id          = "img-eb30mz89"
  availability_zone = "ap-guangzhou-6"
  system_disk_type  = "CLOUD_BSSD"
}

resource "openstack_compute_instance_v2" "l40s" {
  name        = "l40s-worker-01"
  flavor_name = "l40s-90"
  image_name  = "Ubuntu 22.04"
  key_pair    = "ops-ed25519"
  user_data   = templatefile("${path.module}/cloud-init.yaml", { hf_token = var.hf_token })
}

resource "ovh_cloud_project_kube_nodepool" "gpu" {
  service_name = var.ovh_project_id
  kube_id      = ovh_cloud_project_kube.main.id
  flavor_name  = "h100-380"
  desired_nodes = 2
}

output "lambda_key_hint" {
  value     = substr(var.lambda_api_key, 0, 12)
  sensitive = true
}
