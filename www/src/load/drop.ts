// The files a drop carries, a dropped folder's included (and the folders one level inside
// it, as a downloaded model's folder may hold). The drop's items are read before the first
// await: the browser empties them once the drop event has been handled.

import type { NamedFile } from './folder';

export function droppedFiles(dt: DataTransfer): Promise<NamedFile[]> {
  const entries = [...dt.items].map((i) => (i.kind === 'file' ? (i.webkitGetAsEntry?.() ?? null) : null));
  const files = [...dt.files];
  if (!entries.some((e) => e?.isDirectory)) return Promise.resolve(files);
  return (async () => {
    const out: NamedFile[] = [];
    const walk = async (e: FileSystemEntry, depth: number): Promise<void> => {
      if (e.isFile) out.push(await new Promise<File>((ok, no) => (e as FileSystemFileEntry).file(ok, no)));
      else if (e.isDirectory && depth < 2) {
        const reader = (e as FileSystemDirectoryEntry).createReader();
        for (;;) {
          const batch = await new Promise<FileSystemEntry[]>((ok, no) => reader.readEntries(ok, no));
          if (!batch.length) break;
          for (const c of batch) await walk(c, depth + 1);
        }
      }
    };
    for (const e of entries) if (e) await walk(e, 0);
    return out;
  })();
}
