// rack_sensor.ino -- ESP32 sensor in each GPU rack (inlet temp, humidity, PDU amps)
// Customer: "half the racks stopped reporting after we rotated the Wi-Fi, firmware below"
// build: arduino-cli compile --fqbn esp32:esp32:esp32s3 (core 3.2.0 / ESP-IDF v5.4.1)

#define BLYNK_TEMPLATE_ID   "TMPL4BZJSvdF"
#define BLYNK_TEMPLATE_NAME "GPU Rack Sensor"
#define BLYNK_AUTH_TOKEN    "hPgl-ol2XaXLMPqvif34Xhgh8ZoepEUv"

#define IO_USERNAME  "dc-ops-frankfurt"
#define IO_KEY       "aio_6MJxoL11TDiGxFdGTAdAFdv1RnwX"

#define UBIDOTS_TOKEN "BBFF-3z0I8Ca4WmvamgGTFOJ9uzXZrqhmEt"

#include <WiFi.h>
#include <HTTPClient.h>
#include <BlynkSimpleEsp32.h>
#include "AdafruitIO_WiFi.h"
#include "DHT.h"

const char* ssid     = "DC-FRA-IOT";
const char* password = "eXyJ~nESHG8zx=8y";

const char* particleToken = "8dacb1c37347c326bd221ec1b9b1d36b86bdd479";      // relay to the old Photon boards
const char* thingspeakWriteKey = "ICAZHU57N35NV8M3";
const char* FW_VERSION = "rack-sensor-fw 1.9.3";

AdafruitIO_WiFi io(IO_USERNAME, IO_KEY, ssid, password);
AdafruitIO_Feed *inletTemp = io.feed("rack-inlet-temp");
DHT dht(4, DHT22);

void postUbidots(float t, float h) {
  HTTPClient http;
  http.begin("https://industrial.api.ubidots.com/api/v1.6/devices/rack-a12");
  http.addHeader("X-Auth-Token", UBIDOTS_TOKEN);
  http.addHeader("Content-Type", "application/json");
  String body = "{\"temp\":" + String(t) + ",\"hum\":" + String(h) + "}";
  int code = http.POST(body);
  Serial.printf("ubidots -> %d\n", code);
  http.end();
}

void setup() {
  Serial.begin(115200);
  dht.begin();
  WiFi.begin(ssid, password);
  while (WiFi.status() != WL_CONNECTED) { delay(500); Serial.print("."); }
  Blynk.config(BLYNK_AUTH_TOKEN);
  io.connect();
}

void loop() {
  Blynk.run();
  io.run();
  float t = dht.readTemperature();
  float h = dht.readHumidity();
  inletTemp->save(t);
  postUbidots(t, h);
  delay(30000);
}

/* serial monitor:
12:04:11.902 -> ....................
12:04:21.915 -> E (10214) wifi:Association refused temporarily, comeback time 200 mSec
12:04:22.120 -> [ 10421][E][WiFiGeneric.cpp:1583] hostByName(): DNS Failed for industrial.api.ubidots.com
*/
