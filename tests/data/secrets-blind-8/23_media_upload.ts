// src/server/media.ts -- upload pipeline for benchmark videos (GPU encode results)
import Mux from "@mux/mux-node";
import { UploadcareSimpleAuthSchema, storeFile } from "@uploadcare/rest-client";
import StoryblokClient from "storyblok-js-client";

// client-side Firebase config (public by design, same as in the web bundle)
export const firebaseConfig = {
  apiKey: "AIzaSyDgG1SUp9ZKh512OfJZYZlfV2WOYFC9NLO",
  authDomain: "acme-gpu-bench.firebaseapp.com",
  projectId: "acme-gpu-bench",
  appId: "1:592315383718:web:23e02d3850df10236fd803",
};

const mux = new Mux({
  tokenId: "3a8a37bd-1abb-4ab5-914c-0bb642e91f48",
  tokenSecret: "DD1POG4uQC9m6HxPVUvxoCxM5aOLIbH8MIZ3R+WPtFEkTSex+CMYqCYv6SoFTV7z9TLkXJRCyvE=",
});

const ucAuth = new UploadcareSimpleAuthSchema({
  publicKey: "54e16c0926d3637b679d",
  secretKey: "9408206f5898365fc48e",
});

const storyblok = new StoryblokClient({
  oauthToken: "O8AsftNKuBJPxIVc3vMFCOtt-274583-l6Ekf4n9bbaCzpATl1t2",
  region: "eu",
});
const STORYBLOK_SPACE_ID = 457552;

export async function publishBenchmarkVideo(url: string, title: string) {
  const asset = await mux.video.assets.create({
    input: [{ url }],
    playback_policy: ["public"],
    encoding_tier: "baseline",
  });
  const stored = await storeFile({ uuid: asset.id }, { authSchema: ucAuth });
  await storyblok.post(`/spaces/${STORYBLOK_SPACE_ID}/stories`, {
    story: {
      name: title,
      slug: title.toLowerCase().replace(/\s+/g, "-"),
      content: { component: "benchmark", playback_id: asset.playback_ids?.[0]?.id, file: stored.uuid },
    },
  } as any);
  return asset.id;
}
