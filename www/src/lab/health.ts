// A run's health alarms in words: what the core's watch saw (`HealthAlarm`: a NaN or an
// infinity and the operation that first gave it, an update too large, attention collapsed,
// a gradient exploding), its likely cause, and a fix to try with this run's own settings
// (the learning rate, the warmup, the norm placement, clipping). Every number comes from
// the alarm or the settings.

import { msg, str } from '@lit/localize';
import type { FaultOp, HealthAlarm, RunSettings } from '../engine/protocol';
import { num as fmt } from '../ui/format';

/** An alarm's number, to three significant digits as the page writes numbers. */
const num = (v: number): string => fmt(v, 3);

/** The operation that first gave a NaN or an infinity, in a few words. */
export function opWords(op: FaultOp): string {
  switch (op) {
    case 'weights':
      return msg('a weight', { id: 'health.op.weights' });
    case 'embedding':
      return msg('the embedding', { id: 'health.op.embedding' });
    case 'norm':
      return msg('the normalisation', { id: 'health.op.norm' });
    case 'qkv_projection':
      return msg('the query/key/value projection', { id: 'health.op.qkv' });
    case 'attention_scores':
      return msg('the attention scores', { id: 'health.op.scores' });
    case 'softmax':
      return msg('the attention softmax', { id: 'health.op.softmax' });
    case 'attention_values':
      return msg('the weighted sum of the values', { id: 'health.op.values' });
    case 'ffn_linear1':
      return msg('the feed-forward network’s first linear layer', { id: 'health.op.ffn1' });
    case 'ffn_activation':
      return msg('the feed-forward network’s activation', { id: 'health.op.ffn-act' });
    case 'sublayer_output':
      return msg('the sublayer’s output and residual sum', { id: 'health.op.output' });
    case 'head':
      return msg('the output head', { id: 'health.op.head' });
    case 'loss':
      return msg('the loss', { id: 'health.op.loss' });
    case 'gradient':
      return msg('the backward pass', { id: 'health.op.gradient' });
  }
}

/** Where: "layer 2" or "outside the layers". */
function where(a: HealthAlarm): string {
  return a.layer === null ? msg('outside the layers', { id: 'health.where.none' }) : msg(str`layer ${a.layer}`, { id: 'health.where.layer' });
}

/** What the watch saw, in one sentence. */
export function alarmWhat(a: HealthAlarm): string {
  switch (a.kind) {
    case 'non_finite': {
      const op = a.op ? opWords(a.op) : msg('an operation', { id: 'health.op.unknown' });
      const base = msg(str`Step ${a.step}: ${op} in ${where(a)} gave ${num(a.value)}.`, { id: 'health.what.non-finite' });
      return a.param ? `${base} ${msg(str`The parameter ${a.param} is not finite.`, { id: 'health.what.param' })}` : base;
    }
    case 'update_too_large':
      return msg(str`Step ${a.step}: one update moved the weights of ${where(a)} by ${num(a.value)} of their size (a warning above ${num(a.limit)}).`, { id: 'health.what.update' });
    case 'attention_collapsed':
      return msg(str`Step ${a.step}: the attention of ${where(a)} has collapsed onto single positions (entropy ${num(a.value)} nats, below ${num(a.limit)}) this early in the run.`, { id: 'health.what.entropy' });
    case 'gradient_exploding':
      return msg(str`Step ${a.step}: the gradient norm of ${where(a)} is ${num(a.value)} (above ${num(a.limit)}).`, { id: 'health.what.grad' });
  }
}

/** The likely cause. */
export function alarmCause(a: HealthAlarm): string {
  if (a.kind === 'non_finite' && a.op === 'weights') return msg('Likely cause: an earlier update already broke that weight.', { id: 'health.cause.weights' });
  switch (a.kind) {
    case 'attention_collapsed':
      return msg(str`Likely cause: the attention scores grew too fast while the learning rate was ${num(a.lr)}, before the model could learn where to look.`, { id: 'health.cause.entropy' });
    default:
      return msg(str`Likely cause: a learning rate too high for this model (${num(a.lr)} at that step).`, { id: 'health.cause.lr' });
  }
}

/** A fix to try, with this run's own settings. */
export function alarmFix(a: HealthAlarm, s: RunSettings): string {
  const lr =
    s.lr.kind === 'noam'
      ? msg(str`lower the learning-rate factor (now ${num(s.lr.factor)}) or lengthen the warmup (now ${s.lr.warmup} steps)`, { id: 'health.fix.noam' })
      : msg(str`lower the constant learning rate (now ${num(s.lr.value)}) or use the Noam schedule with a warmup`, { id: 'health.fix.constant' });
  const parts = [lr];
  if (s.norm === 'post_ln') parts.push(msg('place the norms before each sublayer (pre-LN), which keeps deep stacks stable', { id: 'health.fix.pre-ln' }));
  if (s.norm === 'none') parts.push(msg('add layer normalisation (pre-LN)', { id: 'health.fix.add-norm' }));
  if (a.kind === 'gradient_exploding' || a.kind === 'non_finite') {
    if (s.clip === 0) parts.push(msg('turn on gradient clipping', { id: 'health.fix.clip-on' }));
  }
  return msg(str`Try: ${parts.join(msg('; ', { id: 'health.fix.sep' }))}.`, { id: 'health.fix' });
}

/** The whole alarm: what, cause, fix. */
export function alarmText(a: HealthAlarm, s: RunSettings): string {
  return `${alarmWhat(a)} ${alarmCause(a)} ${alarmFix(a, s)}`;
}
