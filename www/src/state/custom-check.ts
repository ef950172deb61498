// What a model that is not a shipped one must pass before its bytes reach the engine: the
// checkpoint loader's size limit, and what loading it would need against this device (the
// pre-flight of ../lab/preflight.ts: about three times the model's bytes). A Hugging Face
// folder is held against the device with the engine's own reading of its config.json
// (`hfCheck`: its float32 weights), so it is refused before model.safetensors is read or
// fetched.

import { msg, str } from '@lit/localize';
import type { HfCheck } from '../engine/protocol';
import { MAX_CHECKPOINT_BYTES } from '../lab/registry';
import { deviceRoom, loadMisfit } from '../lab/preflight';

/** Refuse checkpoint bytes that the loader or this device cannot take (throws the reason). */
export async function checkCheckpointSize(bytes: Uint8Array): Promise<void> {
  if (bytes.length > MAX_CHECKPOINT_BYTES) {
    // The loader's own check (crate/src/limits.rs), made before the bytes are copied to the engine.
    throw new Error(msg(str`bad checkpoint: file size (bytes): ${bytes.length} is above the limit of ${MAX_CHECKPOINT_BYTES}`));
  }
  const misfit = loadMisfit(bytes.length, await deviceRoom());
  if (misfit) throw new Error(misfit);
}

/** `check`, or the reason this device cannot load it: the larger of its float32 weights and `modelBytes` (model.safetensors' size, where known). */
export async function fitsDevice(check: HfCheck, modelBytes: number | null): Promise<HfCheck> {
  const misfit = loadMisfit(Math.max(check.f32_bytes, modelBytes ?? 0), await deviceRoom());
  if (misfit) throw new Error(misfit);
  return check;
}
