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
