// What "Load a model" reads: the files a learner picked or dropped, sorted into a Hugging
// Face GPT-2 folder (`config.json`, `model.safetensors`, and `tokenizer.json` or
// `vocab.json` + `merges.txt`) or one of the page's own .safetensors checkpoints; and the
// same folder at an address: its config.json first, then the size of model.safetensors
// (a HEAD request), then the tokenizer, and only then — once the engine and this device
// have accepted the model — the download, with its progress, which can be cancelled.
//
// Every refusal is one sentence that says what is wrong and what to do. The small files
// are read with a ceiling; model.safetensors is read only after the checks.

import { msg, str } from '@lit/localize';
import type { HfCheck, HfFiles } from '../engine/protocol';
import { bytes } from '../ui/format';

/** The model family the engine reads from Hugging Face folders (its name, not a figure). */
export const FAMILY = 'GPT-2';

/** The most config.json may hold (GPT-2's is under a kilobyte). */
export const CONFIG_MAX_BYTES = 1024 * 1024;
/** The most a tokenizer file may hold (GPT-2's tokenizer.json is 1.4 MB; the engine checks what is inside). */
export const TOKENIZER_MAX_BYTES = 64 * 1024 * 1024;

/** A file as the picker, a drop or a script gives it (a File, or a Blob with a name). */
export interface NamedFile {
  readonly name: string;
  readonly size: number;
  /** The path inside a picked folder (`gpt2/config.json`), where the browser gives one. */
  readonly webkitRelativePath?: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** A Hugging Face folder's files, not read yet. */
export interface PickedFolder {
  kind: 'hf';
  config: NamedFile;
  model: NamedFile;
  tokenizerJson?: NamedFile;
  vocabJson?: NamedFile;
  merges?: NamedFile;
  /** The folder's name where the browser gave it ('' when it did not). */
  folder: string;
}

/** One of the page's own checkpoints (a lab run's export, an edited model). */
export interface PickedCheckpoint {
  kind: 'checkpoint';
  file: NamedFile;
}

export type Picked = PickedFolder | PickedCheckpoint;

function baseName(f: NamedFile): string {
  return f.name.split(/[\\/]/).pop() ?? f.name;
}

/** The sentence that names what a Hugging Face folder must hold. */
function needs(): string {
  return msg(str`A Hugging Face ${FAMILY} folder needs config.json, model.safetensors, and tokenizer.json (or vocab.json and merges.txt).`, { id: 'load.needs' });
}

/**
 * Sort the files given into a Hugging Face folder or one checkpoint; throws an Error whose
 * message says what is missing or wrong. Files a folder also holds (README.md,
 * generation_config.json, tokenizer_config.json, …) are left aside.
 */
export function sortPicked(files: readonly NamedFile[]): Picked {
  if (!files.length) throw new Error(msg('No files were given.', { id: 'load.no-files' }));
  const named = new Map<string, NamedFile>();
  for (const f of files) {
    const n = baseName(f);
    if (!named.has(n)) named.set(n, f);
  }
  const tensors = files.filter((f) => /\.safetensors$/i.test(baseName(f)));
  const config = named.get('config.json');
  const hfHints = ['config.json', 'tokenizer.json', 'vocab.json', 'merges.txt', 'pytorch_model.bin'].some((n) => named.has(n));
  if (!config) {
    if (tensors.length === 1 && !hfHints) return { kind: 'checkpoint', file: tensors[0] };
    if (tensors.length > 1 && !hfHints) {
      throw new Error(msg('Choose one .safetensors checkpoint at a time, or a whole Hugging Face folder with its config.json.', { id: 'load.many-checkpoints' }));
    }
    if (hfHints) throw new Error(`${msg('config.json is missing.', { id: 'load.no-config' })} ${needs()}`);
    const shown = files
      .slice(0, 3)
      .map((f) => baseName(f))
      .join(', ');
    throw new Error(
      `${msg(str`None of these files is a model (${shown}).`, { id: 'load.not-a-model' })} ${needs()} ${msg('A checkpoint the lab exported is one .safetensors file.', { id: 'load.or-checkpoint' })}`,
    );
  }
  const model = named.get('model.safetensors');
  if (!model) {
    if (tensors.some((f) => /-of-\d+\.safetensors$/i.test(baseName(f)))) {
      throw new Error(msg('This model is split into several .safetensors files; only a single model.safetensors is read.', { id: 'load.sharded' }));
    }
    if (named.has('pytorch_model.bin')) {
      throw new Error(
        msg('This folder has pytorch_model.bin but no model.safetensors: only the safetensors format is read, because it holds numbers and never code. Download model.safetensors from the same place.', {
          id: 'load.only-bin',
        }),
      );
    }
    throw new Error(`${msg('model.safetensors is missing.', { id: 'load.no-model' })} ${needs()}`);
  }
  const tokenizerJson = named.get('tokenizer.json');
  const vocabJson = named.get('vocab.json');
  const merges = named.get('merges.txt');
  if (!tokenizerJson && !(vocabJson && merges)) {
    if (vocabJson || merges) {
      throw new Error(msg('vocab.json and merges.txt go together: give both, or tokenizer.json.', { id: 'load.half-tokenizer' }));
    }
    throw new Error(msg('No tokenizer: add tokenizer.json, or vocab.json and merges.txt, from the model’s folder.', { id: 'load.no-tokenizer' }));
  }
  const path = config.webkitRelativePath ?? '';
  const folder = path.includes('/') ? path.split('/').slice(-2, -1)[0] : '';
  // tokenizer.json is preferred when both forms are there (it is the complete one).
  return tokenizerJson ? { kind: 'hf', config, model, tokenizerJson, folder } : { kind: 'hf', config, model, vocabJson, merges, folder };
}

/** Read a small file whole, refusing one above `max` bytes before reading it. */
export async function readSmall(f: NamedFile, max: number): Promise<Uint8Array> {
  if (f.size > max) throw new Error(msg(str`${baseName(f)} holds ${bytes(f.size)}, more than such a file may (${bytes(max)}).`, { id: 'load.too-big-file' }));
  return new Uint8Array(await f.arrayBuffer());
}

/** The tokenizer's files of a picked folder, read. */
export async function readTokenizer(p: PickedFolder): Promise<Omit<HfFiles, 'config' | 'model'>> {
  const out: Omit<HfFiles, 'config' | 'model'> = {};
  if (p.tokenizerJson) out.tokenizerJson = await readSmall(p.tokenizerJson, TOKENIZER_MAX_BYTES);
  if (p.vocabJson) out.vocabJson = await readSmall(p.vocabJson, TOKENIZER_MAX_BYTES);
  if (p.merges) out.merges = await readSmall(p.merges, TOKENIZER_MAX_BYTES);
  return out;
}

// ---------------------------------------------------------------- by address

/** File names that may end an address given for a folder: the folder is what is before them. */
const FOLDER_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'vocab.json', 'merges.txt'];

/**
 * The folder an address names, ending in `/`: a file of the folder stands for its folder,
 * and a Hugging Face model page (`https://huggingface.co/openai-community/gpt2`, or its
 * `tree/main`) for the folder its files are downloaded from (`…/resolve/main/`). Only
 * http and https addresses.
 */
export function folderUrl(input: string, base?: string): URL {
  const text = input.trim();
  let u: URL;
  try {
    u = new URL(text, base);
  } catch {
    throw new Error(msg(str`“${text}” is not an address.`, { id: 'load.bad-url' }));
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(msg('Only http and https addresses can be loaded.', { id: 'load.url-scheme' }));
  u.hash = '';
  u.search = '';
  let segs = u.pathname.split('/').filter(Boolean);
  if (segs.length && FOLDER_FILES.includes(segs[segs.length - 1])) segs = segs.slice(0, -1);
  if (u.hostname === 'huggingface.co' && segs.length && !segs.includes('resolve')) {
    const at = segs.findIndex((s) => s === 'tree' || s === 'blob');
    if (at > 0) segs = [...segs.slice(0, at), 'resolve', ...segs.slice(at + 1)];
    else if (segs.length <= 2) segs = [...segs, 'resolve', 'main'];
  }
  u.pathname = `/${segs.map((s) => s).join('/')}${segs.length ? '/' : ''}`;
  return u;
}

/** What fetching `url` failed with, in one sentence. */
function unreachable(url: string): Error {
  return new Error(
    msg(str`Could not reach ${url}: the address may be wrong or the server down, or the server does not let other sites read its files (CORS), or this page’s rules forbid it.`, {
      id: 'load.unreachable',
    }),
  );
}

function notFound(url: string): Error {
  return new Error(msg(str`${url} was not found (HTTP 404).`, { id: 'load.not-found' }));
}

export class Cancelled extends Error {
  constructor() {
    super(msg('Cancelled: nothing was changed.', { id: 'load.cancelled' }));
    this.name = 'Cancelled';
  }
}

function aborted(e: unknown, signal?: AbortSignal): boolean {
  return !!signal?.aborted || (e instanceof DOMException && e.name === 'AbortError');
}

/** GET (or HEAD) `url`; a Response that is ok, or null for a 404 when `missingOk`. */
async function get(url: string, opts: { head?: boolean; missingOk?: boolean; signal?: AbortSignal }): Promise<Response | null> {
  let r: Response;
  try {
    r = await fetch(url, { method: opts.head ? 'HEAD' : 'GET', signal: opts.signal, credentials: 'omit', cache: 'no-cache' });
  } catch (e) {
    if (aborted(e, opts.signal)) throw new Cancelled();
    throw unreachable(url);
  }
  if (r.status === 404 && opts.missingOk) return null;
  if (!r.ok) {
    if (r.status === 404) throw notFound(url);
    throw new Error(msg(str`${url} answered HTTP ${r.status}.`, { id: 'load.http' }));
  }
  return r;
}

/** The announced size of a response (Content-Length), or null when it gives none. */
function announced(r: Response): number | null {
  const n = Number(r.headers.get('content-length'));
  return r.headers.has('content-length') && Number.isFinite(n) && n >= 0 ? n : null;
}

/**
 * A response's body, read as it arrives: never more than `max` bytes (refused before
 * reading when the response announces more), with `progress` after each chunk.
 */
export async function readBody(r: Response, url: string, max: number, progress?: (done: number, total: number | null) => void, signal?: AbortSignal): Promise<Uint8Array> {
  const name = url.split('/').pop() || url;
  const total = announced(r);
  const over = (n: number) => new Error(msg(str`${name} holds ${bytes(n)}, more than can be loaded here (${bytes(max)}).`, { id: 'load.too-big-url' }));
  if (total !== null && total > max) {
    await r.body?.cancel().catch(() => undefined);
    throw over(total);
  }
  if (!r.body) return new Uint8Array(await r.arrayBuffer());
  const reader = r.body.getReader();
  // With the size announced the bytes land in place; otherwise chunks are joined at the end.
  let out = total !== null ? new Uint8Array(total) : null;
  const chunks: Uint8Array[] = [];
  let done = 0;
  progress?.(0, total);
  try {
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      if (done + value.length > (total ?? max)) {
        await reader.cancel().catch(() => undefined);
        throw total !== null ? new Error(msg(str`${name} sent more bytes than it announced (${bytes(total)}).`, { id: 'load.more-than-announced' })) : over(done + value.length);
      }
      if (out) out.set(value, done);
      else chunks.push(value);
      done += value.length;
      progress?.(done, total);
    }
  } catch (e) {
    if (aborted(e, signal)) throw new Cancelled();
    if (e instanceof Error && e.name !== 'TypeError') throw e;
    throw unreachable(url);
  }
  if (out && done < out.length) out = out.slice(0, done);
  if (!out) {
    out = new Uint8Array(done);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
  }
  return out;
}

/** A folder at an address, checked: what is known before model.safetensors is downloaded. */
export interface Probe {
  /** The folder's address, ending in `/`. */
  base: string;
  config: Uint8Array;
  /** The engine's reading of config.json. */
  check: HfCheck;
  /** model.safetensors' size as the server announces it (null when it does not say). */
  modelBytes: number | null;
  /** The tokenizer's files. */
  tokenizer: Omit<HfFiles, 'config' | 'model'>;
}

/**
 * Read the folder at `base` up to the download of model.safetensors: config.json, which
 * `check` (the engine's check and this device's pre-flight) accepts or refuses; the size
 * of model.safetensors, checked again by `fits`; and the tokenizer (tokenizer.json, else
 * vocab.json + merges.txt). Nothing large is fetched.
 */
export async function probeFolder(
  base: URL,
  deps: { check(config: Uint8Array, modelBytes: number | null): Promise<HfCheck>; signal?: AbortSignal },
): Promise<Probe> {
  const at = (name: string) => new URL(name, base).href;
  const signal = deps.signal;
  const configResp = (await get(at('config.json'), { signal }))!;
  const config = await readBody(configResp, at('config.json'), CONFIG_MAX_BYTES, undefined, signal);
  // The engine reads the config and counts the parameters; the device is asked whether they fit.
  const check = await deps.check(config, null);
  const head = await get(at('model.safetensors'), { head: true, missingOk: true, signal });
  if (!head) throw new Error(`${notFound(at('model.safetensors')).message} ${needs()}`);
  const modelBytes = announced(head);
  if (modelBytes !== null) await deps.check(config, modelBytes);
  const tokenizer: Omit<HfFiles, 'config' | 'model'> = {};
  const tj = await get(at('tokenizer.json'), { missingOk: true, signal });
  if (tj) tokenizer.tokenizerJson = await readBody(tj, at('tokenizer.json'), TOKENIZER_MAX_BYTES, undefined, signal);
  else {
    const v = await get(at('vocab.json'), { missingOk: true, signal });
    const m = v ? await get(at('merges.txt'), { missingOk: true, signal }) : null;
    if (!v || !m) {
      throw new Error(msg(str`No tokenizer at ${base.href}: neither tokenizer.json nor vocab.json with merges.txt was found there.`, { id: 'load.no-tokenizer-url' }));
    }
    tokenizer.vocabJson = await readBody(v, at('vocab.json'), TOKENIZER_MAX_BYTES, undefined, signal);
    tokenizer.merges = await readBody(m, at('merges.txt'), TOKENIZER_MAX_BYTES, undefined, signal);
  }
  return { base: base.href, config, check, modelBytes, tokenizer };
}

/** Download model.safetensors of a checked folder: at most `max` bytes, with progress; `signal` cancels. */
export async function downloadModel(p: Probe, max: number, progress?: (done: number, total: number | null) => void, signal?: AbortSignal): Promise<HfFiles> {
  const url = new URL('model.safetensors', p.base).href;
  const r = (await get(url, { signal }))!;
  const model = await readBody(r, url, max, progress, signal);
  return { config: p.config, model, ...p.tokenizer };
}

/** A name for a folder at an address: its last meaningful part (`gpt2` of `…/gpt2/resolve/main/`). */
export function folderLabel(base: string): string {
  const segs = new URL(base).pathname.split('/').filter(Boolean);
  const at = segs.indexOf('resolve');
  const name = at > 0 ? segs[at - 1] : segs[segs.length - 1];
  return name ? decodeURIComponent(name) : new URL(base).host;
}
