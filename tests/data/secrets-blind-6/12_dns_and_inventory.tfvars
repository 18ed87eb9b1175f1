# terraform.tfvars for envs/gpu-prod  (plan fails with 403 from GoDaddy, see bottom)
region        = "eu-central-1"
instance_type = "p5.48xlarge"
gpu_ami_id    = "ami-0819a46ba6b336c60"
node_count    = 6

# DNS providers -- we are mid-migration from GoDaddy to Hetzner DNS + NS1
hetzner_dns_token = "aVVnYk2fgbj2lsDZNy3QxDSGqALR3Qfi"
godaddy_api_key    = "Mz7Xpq08di_NFixncSXnRhYRiqM4A3msw"
godaddy_api_secret = "v4VcPgROx7hyt4vSBhlHMc"
ns1_apikey         = "iDqPWzNVAhOqs8brGOCz"
# NOTE: long term the ns1 key should come from vault:secret/data/gpu-fleet/ns1#api_key

# inventory / queues
netbox_url       = "https://netbox.corp.internal"
netbox_api_token = "0d46ac81972fdcfb187663d1ed86fa1264ba1efb"
cloudamqp_apikey = "930cfb65-3c5e-4a59-8461-df7767b3fdda"

# where the rest of the secrets live
db_secret_arn = "arn:aws:secretsmanager:eu-central-1:285455206446:secret:prod/gpu-fleet/dns-WFLK9G"

zone_records = {
  "api"      = { type = "A",     ttl = 300, values = ["198.51.100.24"] }
  "h100-lb"  = { type = "CNAME", ttl = 300, values = ["h100-lb.eu-central-1.elb.amazonaws.com"] }
  "status"   = { type = "CNAME", ttl = 600, values = ["stats.uptimerobot.com"] }
}

tags = {
  team        = "gpu-platform"
  cost_center = "ml-infra"
  managed_by  = "terraform"
}

# $ terraform plan -var-file=terraform.tfvars
# ...
# godaddy_domain_record.api: Refreshing state... [id=gpu-rental.example.io]
# hetznerdns_zone.main: Refreshing state... [id=PYjeef6Xt07EYaWX7UlzSF]
# netbox_ip_address.gpu_nodes[0]: Refreshing state... [id=4410]
# | Error: GET https://api.godaddy.com/v1/domains/gpu-rental.example.io/records: 403 Forbidden
# |   {"code":"ACCESS_DENIED","message":"Authenticated user is not allowed access"}
# |
# |   with godaddy_domain_record.api,
# |   on dns.tf line 14, in resource "godaddy_domain_record" "api":
