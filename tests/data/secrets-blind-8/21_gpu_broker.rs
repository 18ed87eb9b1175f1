// src/broker.rs -- compares spot prices across providers, panics on startup since 0.4.2
// Cargo.toml:
//   reqwest = { version = "0.12.9", features = ["json", "rustls-tls"] }
//   serde = { version = "1", features = ["derive"] }
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Deserialize;
use std::time::Duration;

pub struct TensorDockCreds {
    pub api_key_id: &'static str,
    pub api_token: &'static str,
}

const TD: TensorDockCreds = TensorDockCreds {
    api_key_id: "gpu-broker-prod",
    api_token: "tygp5xZYjFtL3NpTicKYp2RFQ5iy0mgrQbcuMp57",
};

#[derive(Debug, Deserialize)]
pub struct Offer {
    pub id: String,
    pub gpu_model: String,
    pub price_per_hour: f64,
}

pub async fn fluidstack_offers(client: &reqwest::Client) -> anyhow::Result<Vec<Offer>> {
    let resp = client
        .get("https://platform.fluidstack.io/list_available_configurations")
        .header("api-key", "0d4b0237cfeafa0f44b06c9c610f676e")
        .query(&[("gpu_type", "h100-sxm5-80gb")])
        .timeout(Duration::from_secs(10))
        .send()
        .await?;
    Ok(resp.error_for_status()?.json().await?)
}

pub async fn tensordock_offers(client: &reqwest::Client) -> anyhow::Result<Vec<Offer>> {
    let mut headers = HeaderMap::new();
    headers.insert("Authorization", HeaderValue::from_str(&format!("Bearer {}", TD.api_token))?);
    let resp = client
        .get("https://dashboard.tensordock.com/api/v2/hostnodes")
        .headers(headers)
        .send()
        .await?;
    Ok(resp.error_for_status()?.json().await?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_instance_id() {
        let id = "1021c1f3-ab67-41c2-b3b1-bfefb1bf3e90";
        assert_eq!(id.len(), 36);
    }
}
