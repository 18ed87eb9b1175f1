terraform {
  required_version = ">= 1.6.0"
  required_providers {
    aws       = { source = "hashicorp/aws", version = "~> 5.70" }
    vault     = { source = "hashicorp/vault", version = "~> 4.4" }
    pagerduty = { source = "PagerDuty/pagerduty", version = "~> 3.15" }
  }
}

provider "vault" {
  address = "https://vault.gpu.lab:8200"
  skip_child_token = true
  auth_login {
    path = "auth/approle/login"
    parameters = {
      role_id   = "5eda499e-f107-4ae3-8b3c-db1f4fa88bcb"
      secret_id = "f24b7f27-961c-45f0-91fd-3dbfd4cd2e1d"
    }
  }
}

provider "pagerduty" {
  token = "u+IobP82p8fnzwHBKj-t"
}

variable "db_password" {
  type      = string
  sensitive = true
}

variable "gpu_count" { default = 8 }

resource "aws_instance" "h100_node" {
  count                  = var.gpu_count / 8
  ami                    = "ami-0c5a1b2f3e4d5c6b7"
  instance_type          = "p5.48xlarge"
  placement_group        = aws_placement_group.efa.id
  ebs_optimized          = true
  user_data = <<-EOF
    #!/bin/bash
    apt-get install -y nvidia-driver-550-server nvidia-fabricmanager-550 consul
    cat > /etc/consul.d/consul.hcl <<'HCL'
    datacenter = "gpu-eu1"
    data_dir   = "/opt/consul"
    encrypt    = "f8eEXpgJPvpObcGHEWvRdCr5QfSiPwfvzE3IpaRdyVY="
    retry_join = ["provider=aws tag_key=consul tag_value=gpu-eu1"]
    HCL
    systemctl enable --now consul nvidia-fabricmanager
  EOF
  tags = { Name = "h100-${count.index}", Role = "inference" }
}

resource "aws_db_instance" "rag" {
  engine         = "postgres"
  engine_version = "16.4"
  instance_class = "db.r6g.2xlarge"
  username       = "ragadmin"
  password       = var.db_password
}

resource "pagerduty_service" "inference" {
  name              = "gpu-inference-prod"
  escalation_policy = "P1X2Y3Z"
}

# ==================== terraform.tfvars ====================
gpu_count   = 16
region      = "eu-central-1"
db_password = "Ta5qDAV%lw%!Np4G9EN."
