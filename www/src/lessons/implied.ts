// The settings a lesson implies: `lesson=<id>` in a link (or the element's own `lesson`
// attribute, which the link may not change) brings the lesson's preset with it; in a
// Chinese page, its Chinese one (./zh-presets.ts).

import { parseLang, type Lang } from '../state/url';
import { lessonEntry } from './catalogue';
import { presetFor } from './zh-presets';

/** The preset implied by `hash` (`lesson=<id>`), else by the element's lesson `own` ('' for none). */
export function lessonPresetOf(hash: string, own: string, startLang: () => Lang): string {
  let id: string | null = null;
  let lang: Lang | undefined;
  try {
    const params = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
    id = params.get('lesson');
    lang = parseLang(params.get('lang') ?? '');
  } catch {
    id = null;
  }
  const inLang = lang ?? startLang();
  const named = id ? lessonEntry(id) : undefined;
  if (id) return named ? presetFor(named, inLang) : '';
  const mine = lessonEntry(own);
  return mine ? `${presetFor(mine, inLang)}&lesson=${mine.id}` : '';
}
