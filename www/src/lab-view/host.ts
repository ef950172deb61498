// The types the lab view reads: a run's settings and points (crate/src/protocol.rs, through
// the generated protocol types) and the element's records and handles of runs (../lab/).

export type { EvalPoint, LrSettings, RunBackend, RunDefaults, RunSettings, TrainPoint } from '../engine/protocol';
export type { RunRecord, RunStatus } from '../lab/types';
export type { RunHandle } from '../lab/registry';
