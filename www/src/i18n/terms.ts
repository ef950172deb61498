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
    text: ['continue your own text, one character at a time', () => msg('continue your own text, one character at a time', { id: 'task.text' })],
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

/**
 * A position encoding (`ModelInfo.pos_encoding`, the value a link spells) in words, as the
 * drop-downs and legends show it. The link keeps its own spelling (`alibi`, `rope`…).
 */
export function posEncodingName(p: string): string {
  switch (p) {
    case 'sinusoidal':
      return msg('sinusoidal', { id: 'term.pos.sinusoidal' });
    case 'learned':
      return msg('learned', { id: 'term.pos.learned' });
    case 'rope':
      return msg('RoPE (rotary)', { id: 'term.pos.rope' });
    case 'alibi':
      return msg('ALiBi (distance penalty)', { id: 'term.pos.alibi' });
    case 'relative':
      return msg('relative (Shaw)', { id: 'term.pos.relative' });
    case 'none':
      return msg('none', { id: 'term.pos.none' });
    default:
      return p;
  }
}

/** A setting of the page (a key of the link: `causal`, `topk`…) in words, for the teacher page. */
export function settingName(key: string): string {
  const names: Record<string, () => string> = {
    model: () => msg('model', { id: 'term.setting.model' }),
    text: () => msg('input text', { id: 'term.setting.text' }),
    batch: () => msg('other sequences of the batch', { id: 'term.setting.batch' }),
    causal: () => msg('causal mask', { id: 'term.setting.causal' }),
    mask: () => msg('mask editor rule', { id: 'term.setting.mask' }),
    pad: () => msg('padding mask', { id: 'term.setting.pad' }),
    scale: () => msg('scale by √d_k', { id: 'term.setting.scale' }),
    ablate: () => msg('heads switched off', { id: 'term.setting.ablate' }),
    backend: () => msg('backend', { id: 'term.setting.backend' }),
    seed: () => msg('seed', { id: 'term.setting.seed' }),
    strategy: () => msg('decoding rule', { id: 'term.setting.strategy' }),
    temp: () => msg('temperature', { id: 'term.setting.temp' }),
    topk: () => msg('top-k', { id: 'term.setting.topk' }),
    topp: () => msg('top-p', { id: 'term.setting.topp' }),
    beam: () => msg('beam width', { id: 'term.setting.beam' }),
    speed: () => msg('generation speed', { id: 'term.setting.speed' }),
    max: () => msg('tokens to generate', { id: 'term.setting.max' }),
    play: () => msg('play on load', { id: 'term.setting.play' }),
    mode: () => msg('eval or train mode', { id: 'term.setting.mode' }),
    drop: () => msg('dropout probability', { id: 'term.setting.drop' }),
    cache: () => msg('KV cache', { id: 'term.setting.cache' }),
    site: () => msg('attention shown (self or cross)', { id: 'term.setting.site' }),
    layer: () => msg('layer shown', { id: 'term.setting.layer' }),
    head: () => msg('head shown', { id: 'term.setting.head' }),
    chapter: () => msg('chapter', { id: 'term.setting.chapter' }),
    train: () => msg('lab training settings', { id: 'term.setting.train' }),
    views: () => msg('views shown', { id: 'term.setting.views' }),
  };
  return Object.hasOwn(names, key) ? names[key]() : key;
}

/** A control of the page a classroom link may hide (`HIDEABLE`), in words. */
export function controlName(key: string): string {
  const names: Record<string, () => string> = {
    model: () => msg('model list', { id: 'term.control.model' }),
    position: () => msg('position encoding list', { id: 'term.control.position' }),
    design: () => msg('design list', { id: 'term.control.design' }),
    causal: () => msg('causal mask switch', { id: 'term.control.causal' }),
    pad: () => msg('padding mask switch', { id: 'term.control.pad' }),
    scale: () => msg('√d_k switch', { id: 'term.control.scale' }),
    backend: () => msg('backend choice', { id: 'term.control.backend' }),
    seed: () => msg('seed box', { id: 'term.control.seed' }),
    mode: () => msg('eval or train mode', { id: 'term.control.mode' }),
    drop: () => msg('dropout probability box', { id: 'term.control.drop' }),
    rerun: () => msg('“run again” button', { id: 'term.control.rerun' }),
    colours: () => msg('colour choice', { id: 'term.control.colours' }),
    lessons: () => msg('lessons and their tour', { id: 'term.control.lessons' }),
  };
  return Object.hasOwn(names, key) ? names[key]() : key;
}

/** What a setting does, in one line (the teacher page shows it beside `settingName`). */
export function settingDescription(key: string): string {
  const d: Record<string, () => string> = {
    model: () => msg('Which trained model runs: its architecture, position encoding and design.', { id: 'term.desc.model' }),
    text: () => msg('The sentence the model reads or continues.', { id: 'term.desc.text' }),
    batch: () => msg('More sentences of other lengths run with it as one padded batch.', { id: 'term.desc.batch' }),
    causal: () => msg('Whether each position may look only at earlier ones.', { id: 'term.desc.causal' }),
    mask: () => msg('The mask drawn or painted by hand in the mask editor.', { id: 'term.desc.mask' }),
    pad: () => msg('Whether padding positions are hidden from attention.', { id: 'term.desc.pad' }),
    scale: () => msg('Whether attention scores are divided by √d_k before the softmax.', { id: 'term.desc.scale' }),
    ablate: () => msg('Attention heads switched off, to see what each one does.', { id: 'term.desc.ablate' }),
    backend: () => msg('Where the model computes: the graphics card or the processor.', { id: 'term.desc.backend' }),
    seed: () => msg('The random seed of sampling and of dropout masks.', { id: 'term.desc.seed' }),
    strategy: () => msg('How the next token is chosen: greedy, sampling or beam search.', { id: 'term.desc.strategy' }),
    temp: () => msg('Softens or sharpens the probabilities before sampling.', { id: 'term.desc.temp' }),
    topk: () => msg('Sample only among the k most likely tokens.', { id: 'term.desc.topk' }),
    topp: () => msg('Sample only among the most likely tokens that make up probability p.', { id: 'term.desc.topp' }),
    beam: () => msg('How many candidate texts beam search keeps.', { id: 'term.desc.beam' }),
    speed: () => msg('The pause between generated tokens.', { id: 'term.desc.speed' }),
    max: () => msg('How many tokens are generated before stopping.', { id: 'term.desc.max' }),
    play: () => msg('Whether generation starts by itself when the page opens.', { id: 'term.desc.play' }),
    mode: () => msg('Eval mode, or train mode with dropout and batch statistics.', { id: 'term.desc.mode' }),
    drop: () => msg('The share of values dropout sets to zero in train mode.', { id: 'term.desc.drop' }),
    cache: () => msg('Whether generation reuses the keys and values it computed (KV cache).', { id: 'term.desc.cache' }),
    site: () => msg('Which attention the views show: self-attention or cross-attention.', { id: 'term.desc.site' }),
    layer: () => msg('Which layer the views show.', { id: 'term.desc.layer' }),
    head: () => msg('Which head the views show.', { id: 'term.desc.head' }),
    chapter: () => msg('Which chapter of views is open.', { id: 'term.desc.chapter' }),
    train: () => msg('The settings the lab’s training run starts from.', { id: 'term.desc.train' }),
    views: () => msg('Which views the page shows.', { id: 'term.desc.views' }),
  };
  return Object.hasOwn(d, key) ? d[key]() : '';
}

/** The groups of settings the teacher page shows, in order, and the settings and controls of each. */
export const SETTING_GROUPS: readonly { id: string; name: () => string; settings: readonly string[]; controls: readonly string[] }[] = [
  { id: 'input', name: () => msg('Input', { id: 'term.group.input' }), settings: ['model', 'text', 'batch', 'backend'], controls: ['model', 'design', 'backend'] },
  { id: 'masks', name: () => msg('Masks and attention', { id: 'term.group.masks' }), settings: ['causal', 'mask', 'pad', 'scale', 'ablate'], controls: ['causal', 'pad', 'scale'] },
  { id: 'positions', name: () => msg('Positions', { id: 'term.group.positions' }), settings: [], controls: ['position'] },
  { id: 'decoding', name: () => msg('Decoding', { id: 'term.group.decoding' }), settings: ['strategy', 'temp', 'topk', 'topp', 'beam', 'max', 'cache', 'seed', 'speed', 'play'], controls: ['seed', 'rerun'] },
  { id: 'training', name: () => msg('Training', { id: 'term.group.training' }), settings: ['mode', 'drop', 'train'], controls: ['mode', 'drop'] },
  { id: 'views', name: () => msg('Views', { id: 'term.group.views' }), settings: ['site', 'layer', 'head', 'chapter', 'views'], controls: ['colours', 'lessons'] },
];

/** A normalisation and its place (`ModelInfo.norm`: pre_ln, post_ln, batch_norm, none), in words. */
export function normName(norm: string): string {
  switch (norm.replace('-', '_')) {
    case 'pre_ln':
      return msg('Pre-LN', { id: 'term.norm.pre-ln' });
    case 'post_ln':
      return msg('Post-LN', { id: 'term.norm.post-ln' });
    case 'batch_norm':
      return msg('BatchNorm after the add', { id: 'term.norm.batch-norm' });
    case 'none':
      return msg('no normalisation', { id: 'term.norm.none' });
    default:
      return norm;
  }
}

/**
 * The glossary: the standard terms of the course in English and in Simplified Chinese, as
 * the interface and the lessons say them (every Chinese translation in
 * ../../xliff/zh-Hans.xlf uses them; tests/unit/glossary.test.mjs checks it). `source`
 * finds the term in an English string; `zh` must then be in its translation (or one of the
 * Latin names `latin` that Chinese texts also write); `not` are renderings a native reader
 * would flag, never used.
 */
export interface Term {
  readonly en: string;
  readonly zh: string;
  readonly source: RegExp;
  readonly latin?: readonly string[];
  readonly not: readonly string[];
}

export const GLOSSARY: readonly Term[] = [
  { en: 'multi-head attention', zh: '多头注意力', source: /multi-?head attention/i, not: ['多头关注', '多头注意机制', '多头专注'] },
  { en: 'query', zh: '查询', source: /\bquer(y|ies)\b(?!\.)/i, latin: ['Q', 'q'], not: ['询问向量', '问询'] },
  { en: 'key', zh: '键', source: /\b(queries|query), keys?\b|\bkeys? and values?\b/i, latin: ['K', 'k'], not: ['钥匙'] },
  { en: 'value', zh: '值', source: /\bkeys? and values?\b/i, latin: ['V', 'v'], not: ['价值向量'] },
  { en: 'residual connection', zh: '残差连接', source: /residual connections?/i, not: ['残差链接', '剩余连接', '残余连接'] },
  { en: 'layer normalization', zh: '层归一化', source: /layer ?normali[sz]ation/i, latin: ['LayerNorm'], not: ['层标准化', '层规范化', '层正则化', '层正规化'] },
  { en: 'batch normalization', zh: '批归一化', source: /batch ?normali[sz]ation/i, latin: ['BatchNorm'], not: ['批标准化', '批量归一化', '批规范化', '批量标准化', '批次归一化'] },
  { en: 'feed-forward network', zh: '前馈网络', source: /feed-?forward network/i, latin: ['FFN'], not: ['前向网络', '前馈神经网路', '前向反馈网络'] },
  { en: 'position encoding', zh: '位置编码', source: /position(al)? encodings?/i, not: ['位置码', '位置编碼', '定位编码'] },
  { en: 'mask', zh: '掩码', source: /\b(causal|padding) mask\b/i, not: ['遮罩', '蒙版', '屏蔽码', '掩膜'] },
  { en: 'KV cache', zh: 'KV 缓存', source: /\bKV cache\b/i, not: ['KV缓存', '键值缓存', 'KV 快取'] },
  { en: 'beam search', zh: '束搜索', source: /beam search/i, not: ['集束搜索', '波束搜索', '光束搜索'] },
  { en: 'teacher forcing', zh: '教师强制', source: /teacher forcing/i, not: ['教师强迫', '老师强制', 'teacher forcing'] },
  { en: 'warmup', zh: '预热', source: /\bwarm-?up\b/i, not: ['热身', '暖启动'] },
];

/** A position encoding's short name, for a diagram's box ("RoPE", "sinusoidal"). */
export function posEncodingShort(p: string): string {
  switch (p) {
    case 'sinusoidal':
      return msg('sinusoidal', { id: 'term.pos-short.sinusoidal' });
    case 'learned':
      return msg('learned', { id: 'term.pos-short.learned' });
    case 'rope':
      return 'RoPE';
    case 'alibi':
      return 'ALiBi';
    case 'relative':
      return msg('relative', { id: 'term.pos-short.relative' });
    default:
      return p;
  }
}

/** An FFN activation (`ModelInfo.activation`) as papers write it: GELU, ReLU. */
export function activationName(a: string): string {
  const names: Record<string, string> = { gelu: 'GELU', relu: 'ReLU', silu: 'SiLU', swish: 'SiLU' };
  return Object.hasOwn(names, a) ? names[a] : a;
}
