// The lab experiments a lesson sets up, described once: the lab's experiment list
// (../lab-view/fields.ts PRESETS) and the lesson that opens it (../lessons/seed-lessons.ts)
// read the same settings, so the two cannot drift apart. Plain data, no strings to show.

/**
 * One head against several of the same total width: every setting the same (the task's
 * defaults, d_model included) except the number of heads. Sorting needs each position to
 * find its rank among the others; short enough to train in seconds on a CPU.
 */
export const HEADS_EXPERIMENT = {
  task: 'sort',
  /** The heads of the two runs: one head as wide as the model, then the width cut in slices. */
  heads: [1, 4],
  steps: 400,
  eval_every: 200,
} as const;

/** The changes of the task's defaults for the run with `n_heads` heads. */
export function headsRun(n_heads: number): Record<string, number> {
  return { n_heads, steps: HEADS_EXPERIMENT.steps, eval_every: HEADS_EXPERIMENT.eval_every };
}

/** The lab link (`#train=…` text) of the experiment's first run, the one the form starts from. */
export function headsLink(): string {
  const run = headsRun(HEADS_EXPERIMENT.heads[0]);
  return [`task=${HEADS_EXPERIMENT.task}`, ...Object.entries(run).map(([k, v]) => `${k}=${v}`)].join('&');
}
