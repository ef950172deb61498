// Names of the model's parts that several views print, in the page's language.

import { msg, str } from '@lit/localize';

/** An architecture (`ModelInfo.arch`) in words, lower case as inside a sentence. */
export function archName(arch: string): string {
  switch (arch) {
    case 'decoder_only':
      return msg('decoder-only');
    case 'encoder_decoder':
      return msg('encoder-decoder');
    case 'encoder_only':
      return msg('encoder-only');
    default:
      return arch.replace('_', '-');
  }
}

/** A row of the core's cost report (`crate/src/model/cost.rs`: group and part names), in words. */
export function costName(name: string): string {
  switch (name) {
    case 'embeddings':
      return msg('embeddings');
    case 'encoder layer':
      return msg('encoder layer');
    case 'decoder layer':
      return msg('decoder layer');
    case 'head':
      return msg('output head');
    case 'token embedding (a lookup)':
      return msg('token embedding (a lookup)');
    case 'source embedding (a lookup)':
      return msg('source embedding (a lookup)');
    case 'target embedding (a lookup)':
      return msg('target embedding (a lookup)');
    case 'learned positions (a lookup)':
      return msg('learned positions (a lookup)');
    case 'Q projection':
      return msg('Q projection');
    case 'K projection':
      return msg('K projection');
    case 'V projection':
      return msg('V projection');
    case 'O projection':
      return msg('O projection');
    case 'scores + mix':
      return msg('scores + mix');
    case 'cross Q projection':
      return msg('cross Q projection');
    case 'cross K projection':
      return msg('cross K projection');
    case 'cross V projection':
      return msg('cross V projection');
    case 'cross O projection':
      return msg('cross O projection');
    case 'cross scores + mix':
      return msg('cross scores + mix');
    case 'FFN':
      return msg('FFN');
    case 'norms (not counted: O(C))':
      return msg('norms (not counted: O(C))');
    case "encoder's final norm":
      return msg("encoder's final norm");
    case "decoder's final norm":
      return msg("decoder's final norm");
    case 'LM head':
      return msg('LM head');
    case 'LM head (tied to the embedding)':
      return msg('LM head (tied to the embedding)');
    case 'classifier':
      return msg('classifier');
    default:
      return name;
  }
}

/** A stack of the model (`encoder`, `decoder`), in words. */
export function stackName(name: string): string {
  return name === 'encoder' ? msg('encoder') : name === 'decoder' ? msg('decoder') : name;
}

/**
 * A task's one-line description (the core's `Task::description`, crate/src/tasks/), in the
 * page's language. A description the page does not know (a newer core) is shown as it is.
 */
export function taskDescription(task: string, english: string): string {
  const known: Record<string, [string, () => string]> = {
    copy: ['copy a string of letters: cab>cab', () => msg('copy a string of letters: cab>cab', { id: 'task.copy' })],
    reverse: ['reverse a string of letters: cab>bac', () => msg('reverse a string of letters: cab>bac', { id: 'task.reverse' })],
    sort: ['sort a string of letters: cab>abc', () => msg('sort a string of letters: cab>abc', { id: 'task.sort' })],
    addition: ['add two numbers of up to three digits: 12+345=357', () => msg('add two numbers of up to three digits: 12+345=357', { id: 'task.addition' })],
    grammar: [
      'write English sentences of a small grammar, one character at a time',
      () => msg('write English sentences of a small grammar, one character at a time', { id: 'task.grammar' }),
    ],
    sentiment: [
      'classify a movie review as positive or negative, negation included',
      () => msg('classify a movie review as positive or negative, negation included', { id: 'task.sentiment' }),
    ],
    tagging: [
      'tag each word with its part of speech; duck, watch, fish … are nouns or verbs by context',
      () => msg('tag each word with its part of speech; duck, watch, fish … are nouns or verbs by context', { id: 'task.tagging' }),
    ],
    translate: [
      'translate English number words to digits: three hundred twelve → 3 1 2',
      () => msg('translate English number words to digits: three hundred twelve → 3 1 2', { id: 'task.translate' }),
    ],
    'zh-grammar': [
      'write Chinese sentences of a small grammar, one character at a time',
      () => msg('write Chinese sentences of a small grammar, one character at a time', { id: 'task.zh-grammar' }),
    ],
    'zh-numerals': [
      'read Chinese numerals as digits: 三百一十二 → 312, 一万零五 → 10005',
      () => msg('read Chinese numerals as digits: 三百一十二 → 312, 一万零五 → 10005', { id: 'task.zh-numerals' }),
    ],
    'zh-sentiment': [
      'classify a Chinese review as positive or negative; 不 and 没 flip it',
      () => msg('classify a Chinese review as positive or negative; 不 and 没 flip it', { id: 'task.zh-sentiment' }),
    ],
  };
  const k = Object.hasOwn(known, task) ? known[task] : undefined;
  return k && k[0] === english ? k[1]() : english;
}

/**
 * The core's note on a lab field that does not apply to the task (`RunDefaults.not_for_task`),
 * in the page's language where its form is known; otherwise as the core wrote it.
 */
export function notForTask(note: string): string {
  let m = /^task '([^']+)' has no length to choose: its examples come with their own$/.exec(note);
  if (m) return msg(str`task '${m[1]}' has no length to choose: its examples come with their own`, { id: 'task.note.len' });
  m = /^task '([^']+)' fits one architecture, (\w+): null means that one, and another is refused with the reason$/.exec(note);
  if (m) {
    return msg(str`task '${m[1]}' fits one architecture, ${archName(m[2])}: null means that one, and another is refused with the reason`, {
      id: 'task.note.arch',
    });
  }
  return note;
}
