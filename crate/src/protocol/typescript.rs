//! The TypeScript of the protocol, generated from its Rust types by ts-rs.

use ts_rs::TS;

use super::*;
use crate::config::{Activation, Arch, Norm, PosEncoding, Score};
use crate::model::forward::{AttnSite, HeadRef};
use crate::model::mask::{CellEdit, MaskRule};
use crate::tokenizer::TokenizerKind;

/// The TypeScript of every protocol type, as `www/src/engine/generated.ts` holds it.
pub fn typescript() -> String {
    use crate::backend::parity::Parity;
    use crate::explain::blocks::{
        BlockDiff, BlockProbe, CouplingModel, CouplingRequest, DropPlace, DropSite, DropoutDemo,
        DropoutRequest, FfnProbe, NormCoupling, NormProbe, Probed, RowDiff, SequenceInput,
        StackProbe, TrainMode,
    };
    use crate::explain::parallel::{Exponents, ParallelTiming};
    use crate::explain::scoring::{ScoreCost, ScoringComparison};
    use crate::explain::timing::{
        DeviceRates, GpuRates, Part, PartKind, StepTime, TimeRatesRequest, TimeWidthRequest,
        WidthTime,
    };
    use crate::generate::beam::{Ending, Hypothesis};
    use crate::generate::sampling::SampleDraw;
    use crate::generate::step::{BeamStep, Candidate, StopReason};
    use crate::generate::Step;
    use crate::model::cost::{CostReport, CostRow};
    use crate::model::plan::{
        HeadKind, LayerPlan, NormKind, NormStep, Placement, StackInput, StackPlan, SublayerKind,
        SublayerPlan,
    };
    use crate::train::schedule::Schedule;

    // u64 counts (FLOPs, steps, seeds) cross as plain numbers, as serde-wasm-bindgen sends them.
    let cfg = ts_rs::Config::new().with_large_int("number");
    let decls = [
        Arch::decl(&cfg),
        PosEncoding::decl(&cfg),
        Norm::decl(&cfg),
        Score::decl(&cfg),
        Activation::decl(&cfg),
        TokenizerKind::decl(&cfg),
        AttnSite::decl(&cfg),
        HeadRef::decl(&cfg),
        BackendName::decl(&cfg),
        MaskRule::decl(&cfg),
        CellEdit::decl(&cfg),
        MaskEdit::decl(&cfg),
        MaskView::decl(&cfg),
        Switches::decl(&cfg),
        StrategyName::decl(&cfg),
        SamplingRequest::decl(&cfg),
        TrainMode::decl(&cfg),
        ForwardRequest::decl(&cfg),
        GenerateStartRequest::decl(&cfg),
        TokenizeRequest::decl(&cfg),
        CostRequest::decl(&cfg),
        NoamRequest::decl(&cfg),
        ModelInfo::decl(&cfg),
        Tokenized::decl(&cfg),
        TokenizeTrace::decl(&cfg),
        PieceTrace::decl(&cfg),
        SymbolBytes::decl(&cfg),
        HfCheck::decl(&cfg),
        SublayerKind::decl(&cfg),
        NormKind::decl(&cfg),
        Placement::decl(&cfg),
        NormStep::decl(&cfg),
        SublayerPlan::decl(&cfg),
        StackInput::decl(&cfg),
        StackPlan::decl(&cfg),
        HeadKind::decl(&cfg),
        LayerPlan::decl(&cfg),
        Dense::decl(&cfg),
        AttnView::decl(&cfg),
        HiddenView::decl(&cfg),
        FfnView::decl(&cfg),
        ForwardResult::decl(&cfg),
        GenerateStarted::decl(&cfg),
        Candidate::decl(&cfg),
        Ending::decl(&cfg),
        Hypothesis::decl(&cfg),
        BeamStep::decl(&cfg),
        StopReason::decl(&cfg),
        SampleDraw::decl(&cfg),
        Step::decl(&cfg),
        GenerateStep::decl(&cfg),
        CompactStep::decl(&cfg),
        GenerateStepCompact::decl(&cfg),
        GenerateStepsRequest::decl(&cfg),
        GpuWork::decl(&cfg),
        GenerateSteps::decl(&cfg),
        CostRow::decl(&cfg),
        CostReport::decl(&cfg),
        Schedule::decl(&cfg),
        Parity::decl(&cfg),
        ScoreScalingRequest::decl(&cfg),
        PositionsRequest::decl(&cfg),
        RelativeTable::decl(&cfg),
        Positions::decl(&cfg),
        RopeDemoRequest::decl(&cfg),
        EmbeddingScaleRequest::decl(&cfg),
        ExtrapolationRequest::decl(&cfg),
        PermutationRequest::decl(&cfg),
        PermutationResult::decl(&cfg),
        LrSettings::decl(&cfg),
        TrainBackendChoice::decl(&cfg),
        RunSettings::decl(&cfg),
        FailedPass::decl(&cfg),
        RaceUnit::decl(&cfg),
        BackendStatus::decl(&cfg),
        ErrorKind::decl(&cfg),
        EngineError::decl(&cfg),
        ModelInputRequest::decl(&cfg),
        ModelInput::decl(&cfg),
        RunDefaultsRequest::decl(&cfg),
        RunDefaults::decl(&cfg),
        crate::train::footprint::RunFootprint::decl(&cfg),
        EvalPoint::decl(&cfg),
        TrainPoint::decl(&cfg),
        FaultOp::decl(&cfg),
        AlarmKind::decl(&cfg),
        HealthAlarm::decl(&cfg),
        TrainChunkRequest::decl(&cfg),
        TrainChunk::decl(&cfg),
        TrainStarted::decl(&cfg),
        FfnProbe::decl(&cfg),
        NormProbe::decl(&cfg),
        DropPlace::decl(&cfg),
        DropSite::decl(&cfg),
        StackProbe::decl(&cfg),
        BlockProbe::decl(&cfg),
        SequenceInput::decl(&cfg),
        BlockProbeRequest::decl(&cfg),
        BlockDiffRequest::decl(&cfg),
        Probed::decl(&cfg),
        RowDiff::decl(&cfg),
        BlockDiff::decl(&cfg),
        CouplingRequest::decl(&cfg),
        CouplingModel::decl(&cfg),
        NormCoupling::decl(&cfg),
        DropoutRequest::decl(&cfg),
        DropoutDemo::decl(&cfg),
        ParallelRequest::decl(&cfg),
        Exponents::decl(&cfg),
        ParallelTiming::decl(&cfg),
        ScoringRequest::decl(&cfg),
        ScoreCost::decl(&cfg),
        ScoringComparison::decl(&cfg),
        TimeRatesRequest::decl(&cfg),
        GpuRates::decl(&cfg),
        DeviceRates::decl(&cfg),
        TimeWidthRequest::decl(&cfg),
        PartKind::decl(&cfg),
        Part::decl(&cfg),
        StepTime::decl(&cfg),
        WidthTime::decl(&cfg),
        WeightTensor::decl(&cfg),
        WeightSelection::decl(&cfg),
        WeightValues::decl(&cfg),
        WeightSetRequest::decl(&cfg),
        WeightRestoreRequest::decl(&cfg),
        WeightEdit::decl(&cfg),
        WeightEdits::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from the Rust types of crate/src/protocol.rs (and the core types they\n\
         // hold) by ts-rs. Do not edit: change the Rust types and run\n\
         //   TPLAY_UPDATE_TYPES=1 cargo test -p tplay --test protocol_types\n\
         // (the same test fails while this file is stale).\n",
    );
    for d in decls {
        out.push('\n');
        out.push_str("export ");
        out.push_str(d.trim());
        out.push('\n');
    }
    out
}
