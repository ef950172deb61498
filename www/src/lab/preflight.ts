// Before a run starts, what it will need (the engine's `runFootprint`: its worker's memory,
// the storage its saved weights take) against what this device offers: a run that would
// fail halfway is refused with the reason, and the largest batch that fits is offered.
// For a run that insists on WebGPU, the largest buffer it needs is compared with what this
// browser's adapter binds (its limits); under `auto` such a run trains on the CPU instead,
// as the engine decides when it places the run (it checks every buffer before the first
// step).

import { msg, str } from '@lit/localize';
import type { RunFootprint, RunSettings } from '../engine/protocol';
import { bytes } from '../ui/format';

/** A wasm32 memory grows to 4 GiB at most: a run's worker can hold no more. */
export const WASM_MAX_BYTES = 4 * 1024 ** 3;

/** What this device offers a run. */
export interface DeviceRoom {
  /** Bytes a run's worker may hold. */
  memory: number;
  /** Where that figure comes from, in words. */
  memoryWhy: string;
  /** Bytes the browser's storage quota has left (null: the browser does not say). */
  storage: number | null;
  /** The largest buffer this browser's WebGPU adapter binds (null: no adapter). */
  gpuBuffer: number | null;
}

interface AdapterLimits {
  limits?: { maxStorageBufferBindingSize?: number; maxBufferSize?: number };
}

/** The largest storage buffer the adapter binds, as the engine's own check reads it (null: no WebGPU adapter). */
async function gpuBufferLimit(): Promise<number | null> {
  const gpu = (globalThis.navigator as Navigator & { gpu?: { requestAdapter(): Promise<AdapterLimits | null> } }).gpu;
  if (!gpu) return null;
  try {
    const l = (await gpu.requestAdapter())?.limits;
    if (!l || typeof l.maxStorageBufferBindingSize !== 'number' || typeof l.maxBufferSize !== 'number') return null;
    return Math.min(l.maxStorageBufferBindingSize, l.maxBufferSize);
  } catch {
    return null;
  }
}

/**
 * The device's room: the wasm32 ceiling, or half the memory the browser reports
 * (`navigator.deviceMemory`, Chromium only) when that is less; the storage quota left
 * (`navigator.storage.estimate()`).
 */
export async function deviceRoom(withGpu = false): Promise<DeviceRoom> {
  const nav = globalThis.navigator as (Navigator & { deviceMemory?: number }) | undefined;
  const gib = nav?.deviceMemory;
  let memory = WASM_MAX_BYTES;
  let memoryWhy = msg(str`the most a WebAssembly engine can hold (${bytes(WASM_MAX_BYTES)})`, { id: 'preflight.wasm-ceiling' });
  if (typeof gib === 'number' && gib > 0 && (gib * 1024 ** 3) / 2 < memory) {
    memory = (gib * 1024 ** 3) / 2;
    memoryWhy = msg(str`half of the ${bytes(gib * 1024 ** 3)} of memory this browser reports`, { id: 'preflight.device-memory' });
  }
  let storage: number | null = null;
  try {
    const e = await nav?.storage?.estimate?.();
    if (e && typeof e.quota === 'number') storage = Math.max(0, e.quota - (e.usage ?? 0));
  } catch {
    storage = null;
  }
  return { memory, memoryWhy, storage, gpuBuffer: withGpu ? await gpuBufferLimit() : null };
}

/** Why the run does not fit this device ('' when it does); `gpu`: the run insists on WebGPU. */
export function misfit(fp: RunFootprint, room: DeviceRoom, gpu = false): string {
  if (gpu && room.gpuBuffer !== null && fp.largest_buffer_bytes > room.gpuBuffer) {
    return msg(str`This run's largest GPU buffer needs ${bytes(fp.largest_buffer_bytes)}; this browser's WebGPU adapter binds at most ${bytes(room.gpuBuffer)} per buffer. Choose auto or the CPU to train it there.`, { id: 'preflight.gpu-buffer' });
  }
  if (fp.memory_bytes > room.memory) {
    return msg(str`This run needs about ${bytes(fp.memory_bytes)} of memory while it trains; this device allows ${bytes(room.memory)} (${room.memoryWhy}).`, { id: 'preflight.memory' });
  }
  if (room.storage !== null && fp.storage_bytes > room.storage) {
    return msg(str`This run's saved weights need ${bytes(fp.storage_bytes)}; the browser's storage has ${bytes(room.storage)} left. Delete runs you no longer need, or train a smaller model.`, { id: 'preflight.storage' });
  }
  return '';
}

/**
 * Why a checkpoint of `size` bytes cannot be loaded here ('' when it can): the engine holds
 * the file while it reads it, the model it builds, and the model's copy placed for its
 * passes, so about three times the file.
 */
export function loadMisfit(size: number, room: DeviceRoom): string {
  const need = 3 * size;
  if (need <= room.memory) return '';
  return msg(str`This model needs about ${bytes(need)} of memory to load; this device allows ${bytes(room.memory)} (${room.memoryWhy}).`, { id: 'preflight.load' });
}

/** A run refused before it started, with a smaller setting that fits (null: none found). */
export class PreflightRefusal extends Error {
  constructor(
    message: string,
    readonly offer: Partial<RunSettings> | null,
  ) {
    super(message);
    this.name = 'PreflightRefusal';
  }
}

/**
 * Check `settings` against the device before the run starts; throws a
 * `PreflightRefusal` when they do not fit, offering the largest smaller batch that does.
 * `footprint` asks the engine.
 */
export async function preflight(settings: RunSettings, footprint: (s: RunSettings) => Promise<RunFootprint>, room: DeviceRoom): Promise<void> {
  const gpu = settings.backend === 'webgpu';
  const why = misfit(await footprint(settings), room, gpu);
  if (!why) return;
  for (let b = settings.batch - 1; b >= 1; b--) {
    if (!misfit(await footprint({ ...settings, batch: b }), room, gpu)) {
      throw new PreflightRefusal(`${why} ${msg(str`A batch of ${b} fits.`, { id: 'preflight.offer-batch' })}`, { batch: b });
    }
  }
  throw new PreflightRefusal(`${why} ${msg('No batch size fits: make the model smaller (fewer layers, a smaller d_model or d_ff).', { id: 'preflight.no-batch' })}`, null);
}
