// GPT-2's byte-level vocabulary in readable form. A byte-level BPE writes each byte of a
// token as one printable character (bytes_to_unicode: a space is `Ġ`, a newline `Ċ`, the
// bytes of 猫 `çĮ«`); the page shows the text the bytes spell instead (" cat", "猫"), and a
// token whose bytes are part of a character (a CJK character or an emoji split over
// several tokens) as its bytes in hex between angle quotes (‹E6 B3›), never as "�".

/** The byte each character of the byte-level alphabet stands for. */
const BYTE_OF: ReadonlyMap<string, number> = (() => {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++)
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  return new Map(cs.map((c, i) => [String.fromCodePoint(c), bs[i]]));
})();

/** A byte-level token's text: what its bytes spell, or its bytes in hex when they are not whole characters; a token outside the alphabet (a special such as <|endoftext|>) as written. */
export function byteLevelText(token: string): string {
  const bytes: number[] = [];
  for (const c of token) {
    const b = BYTE_OF.get(c);
    if (b === undefined) return token;
    bytes.push(b);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return `‹${bytes.map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ')}›`;
  }
}

/** A byte-level BPE vocabulary in readable form (the ids unchanged). */
export function readableVocab(vocab: readonly string[]): string[] {
  return vocab.map(byteLevelText);
}

const HEX_PIECE = /^‹([0-9A-F]{2}(?: [0-9A-F]{2})*)›$/;

/**
 * Tokens in readable form, with each run of byte pieces (‹F0 9F›‹91›‹8D›) that together spell
 * whole characters joined into those characters (" 👍"): one entry per group, naming the
 * tokens `from`..`to` (inclusive) it stands for. Pieces that never complete a character stay
 * as they are, one entry each.
 */
export function groupBytePieces(texts: readonly string[]): { text: string; from: number; to: number }[] {
  const out: { text: string; from: number; to: number }[] = [];
  const strict = new TextDecoder('utf-8', { fatal: true });
  let i = 0;
  while (i < texts.length) {
    if (!HEX_PIECE.test(texts[i])) {
      out.push({ text: texts[i], from: i, to: i });
      i++;
      continue;
    }
    const bytes: number[] = [];
    let done = -1;
    let text = '';
    for (let k = i; k < texts.length; k++) {
      const m = HEX_PIECE.exec(texts[k]);
      if (!m) break;
      for (const h of m[1].split(' ')) bytes.push(parseInt(h, 16));
      try {
        text = strict.decode(new Uint8Array(bytes));
        done = k;
        break;
      } catch {
        // not whole characters yet: take the next piece
      }
    }
    if (done < 0) {
      out.push({ text: texts[i], from: i, to: i });
      i++;
    } else {
      out.push({ text, from: i, to: done });
      i = done + 1;
    }
  }
  return out;
}
