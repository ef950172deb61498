// The room each view takes before the engine first answers, so that the page (and an
// embedded view) does not jump when the numbers arrive: a placeholder of about the view's
// final height, in CSS pixels, as each view draws the default model — in a two-column page
// or a wide embed (`wide`) and in one narrow column, a phone's (`narrow`). These are sizes
// of empty boxes, not numbers the page shows; `cargo xtask bench` prints the layout shift
// they leave (tests/browser/layout-bench.mjs). A view missing here reserves nothing.

export const RESERVE: Readonly<Record<string, { wide: number; narrow: number }>> = {
  controls: { wide: 170, narrow: 390 },
  backend: { wide: 32, narrow: 95 },
  input: { wide: 180, narrow: 205 },
  generation: { wide: 210, narrow: 275 },
  architecture: { wide: 950, narrow: 1090 },
  attention: { wide: 685, narrow: 1035 },
  masks: { wide: 335, narrow: 495 },
  output: { wide: 490, narrow: 590 },
  hidden: { wide: 195, narrow: 285 },
  'sqrt-dk': { wide: 210, narrow: 475 },
  saturation: { wide: 310, narrow: 415 },
  cost: { wide: 560, narrow: 790 },
  schedule: { wide: 425, narrow: 380 },
  positions: { wide: 1520, narrow: 1215 },
  'embedding-scale': { wide: 565, narrow: 585 },
  order: { wide: 320, narrow: 550 },
  extrapolation: { wide: 160, narrow: 355 },
  ffn: { wide: 470, narrow: 995 },
  'no-leak': { wide: 560, narrow: 845 },
  norms: { wide: 180, narrow: 385 },
  dropout: { wide: 800, narrow: 1640 },
  parallel: { wide: 180, narrow: 350 },
  beams: { wide: 110, narrow: 155 },
  lab: { wide: 610, narrow: 1385 },
};
