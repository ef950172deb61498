// Every view of the playground, registered once. A view's name works in the element's
// `views` attribute and in the URL (`#views=attention,output`); its row says which element
// draws it, under what title, what it needs from the engine beyond the forward pass, and
// how the store's numbers and actions bind to the element. The table's order is the
// order on the page. Adding a view: write its element (one file in ../components/), import
// it below (a view of the first screen) or from its chapter's file in ./chunks/ with a line
// in ./load.ts (a view fetched when first seen), and add one row (www/README.md, "Adding a view").

import { html, type TemplateResult } from 'lit';
import { msg } from '@lit/localize';
import type { AttnSite, HeadRef, ManifestEntry, MaskEdit, Sampling } from '../engine/protocol';
import { EMPTY, type Need, type PlaygroundStore } from '../state/store';
import { EngineClient } from '../engine/client';
import type { PlaygroundState } from '../state/url';
import { generationReach } from './reserve';
import '../components/overview/tp-overview';
import { modelTitle } from '../i18n/models';
import '../components/tp-controls';
import '../components/tp-backend-badge';
import '../components/tp-input';
import '../components/tp-characters';
import '../components/tp-generation';

/** An engine in a worker of its own, for a view that measures without holding up the page's (the time view). */
const spawnEngine = () => EngineClient.trainer();

/** A shipped model's title in the page's language ('' for none). */
const overviewTitle = (m: ManifestEntry | undefined): string => (m ? modelTitle(m) : '');

export interface ViewDef {
  /** The name in the `views` attribute and the URL: lower case, digits and dashes. */
  readonly name: string;
  /** The custom element that draws it. */
  readonly tag: string;
  /** What the view shows, in a few words (for lists of views and screen readers). */
  readonly title: string;
  /** What it needs from the engine beyond the forward pass and its traces. */
  readonly needs: readonly Need[];
  /** Whether the loaded model has anything for this view (default: always). */
  readonly available?: (s: PlaygroundStore) => boolean;
  /** The element, bound to the store's numbers and actions (`class="wide"`: the full width). */
  readonly render: (s: PlaygroundStore) => TemplateResult;
}

type Select = CustomEvent<{ site: AttnSite; layer: number; head: number }>;

export const VIEWS = [
  {
    // The running model as one picture; each stage opens the chapter that explains it.
    name: 'overview',
    tag: 'tp-overview',
    get title() {
      return msg('The model at a glance');
    },
    needs: ['ffn'],
    render: (s) => html`<tp-overview
      class="wide"
      .info=${s.info}
      .plan=${s.plan}
      .forward=${s.lastForward}
      .modelTitle=${s.customModel || overviewTitle(s.manifest.find((m) => m.file === s.st.model))}
      .generated=${s.gen.generated}
      .done=${s.gen.done}
      .sampling=${s.sampling()}
      .classNames=${s.classNames}
      .causal=${s.switches().causal ?? s.info?.causal_default ?? true}
      .text=${s.st.text}
      .textLocked=${s.st.lock.includes('text')}
      @tp-text=${(e: CustomEvent<string>) => s.typeText(e.detail)}
    ></tp-overview>`,
  },
  {
    name: 'controls',
    tag: 'tp-controls',
    get title() {
      return msg('Settings');
    },
    needs: [],
    render: (s) => html`<tp-controls
      class="wide"
      .manifest=${s.manifest}
      .state=${s.st}
      .info=${s.info}
      .causalDefault=${s.info?.causal_default ?? true}
      .trainNote=${s.lastForward?.train_note ?? null}
      .draw=${s.draw}
      .locked=${s.st.lock}
      .hide=${s.st.hide}
      .backendInfo=${s.backendInfo}
      @tp-rerun=${() => void s.runAgain()}
      @tp-state=${(e: CustomEvent<Partial<PlaygroundState>>) => void s.patch(e.detail)}
    ></tp-controls>`,
  },
  {
    name: 'backend',
    tag: 'tp-backend-badge',
    get title() {
      return msg('Backend and GPU–CPU parity');
    },
    needs: [],
    render: (s) => html`<tp-backend-badge class="wide" .info=${s.backendInfo} .asked=${s.st.backend} .engine=${s}></tp-backend-badge>`,
  },
  {
    name: 'input',
    tag: 'tp-input',
    get title() {
      return msg('Input tokens');
    },
    needs: [],
    render: (s) => html`<tp-input
      .text=${s.st.text}
      .batch=${s.st.batch}
      .label=${s.info?.arch === 'encoder_decoder' ? msg('Source sentence') : s.info?.arch === 'encoder_only' ? msg('Input') : msg('Prompt')}
      .info=${s.info}
      .tokenized=${s.tokenized}
      .padded=${s.inputRows()}
      .promptNote=${s.promptNote}
      .lock=${s.st.lock}
      @tp-dismiss-note=${() => s.dismissPromptNote()}
      @tp-text=${(e: CustomEvent<string>) => s.typeText(e.detail)}
      @tp-batch=${(e: CustomEvent<string[]>) => void s.patch({ batch: e.detail })}
    ></tp-input>`,
  },
  {
    // How the tokenizer reads the prompt: bytes, then each merge, then the tokens (from the whole engine, fetched when first seen).
    name: 'tokenizer',
    tag: 'tp-tokenizer',
    get title() {
      return msg('How the tokenizer reads the text: bytes, merges, tokens', { id: 'view.tokenizer.title' });
    },
    needs: [],
    render: (s) => html`<tp-tokenizer class="wide" .engine=${s} .info=${s.info} .text=${s.st.text}></tp-tokenizer>`,
  },
  {
    // The characters a char-level model knows, from its vocabulary; a click adds one.
    name: 'characters',
    tag: 'tp-characters',
    get title() {
      return msg('Characters the model knows', { id: 'view.characters.title' });
    },
    needs: [],
    // Before the engine first answers the room is kept (the default and the Chinese models
    // read characters); a word-level model has no palette.
    available: (s) => !s.info || s.info.tokenizer_kind === 'char',
    render: (s) => html`<tp-characters
      .text=${s.st.text}
      .info=${s.info}
      .locked=${s.st.lock.includes('text')}
      .lock=${s.st.lock}
      @tp-text=${(e: CustomEvent<string>) => s.typeText(e.detail)}
    ></tp-characters>`,
  },
  {
    name: 'generation',
    tag: 'tp-generation',
    get title() {
      return msg('Generation, token by token');
    },
    needs: [],
    available: (s) => s.canGenerate(),
    render: (s) => html`<tp-generation
      .info=${s.info}
      .prompt=${s.promptTokens}
      .generated=${s.gen.generated}
      .playing=${s.gen.playing}
      .done=${s.gen.done}
      .speed=${s.st.speed}
      .stats=${s.gen.stats}
      .step=${s.gen.step}
      .strategy=${s.st.strategy}
      .note=${s.gen.note}
      .max=${s.st.max}
      .label=${s.info?.arch === 'encoder_decoder' ? msg('Translation') : msg('Generation')}
      .cache=${s.st.cache}
      .previousRun=${s.genBefore}
      .sides=${s.genSides()}
      @tp-dismiss-before=${() => s.dismissGenBefore()}
      .draws=${s.gen.draws}
      .lock=${s.st.lock}
      @tp-cache=${(e: CustomEvent<boolean>) => void s.patch({ cache: e.detail })}
      @tp-max=${(e: CustomEvent<number>) => void s.patch({ max: e.detail })}
      @tp-play=${() => void s.gen.play()}
      @tp-pause=${() => s.gen.pause()}
      @tp-step=${() => void s.gen.stepOne()}
      @tp-restart=${() => void s.gen.start(true)}
      @tp-speed=${(e: CustomEvent<number>) => void s.patch({ speed: e.detail })}
    ></tp-generation>`,
  },
  {
    name: 'architecture',
    tag: 'tp-architecture',
    get title() {
      return msg('Architecture diagram');
    },
    needs: [],
    render: (s) => html`<tp-architecture
      .info=${s.info}
      .plan=${s.plan}
      .site=${s.site}
      .layer=${s.st.layer}
      .head=${s.st.head}
      .cell=${s.cell}
      .trace=${s.trace}
      .queryTokens=${s.queryTokens}
      .keyTokens=${s.keyTokens}
      .row=${s.shownRow}
      .scaleOn=${s.st.scale}
      .causalOn=${s.switches().causal ?? s.info?.causal_default ?? true}
      .masks=${s.lastForward?.masks ?? EMPTY}
      .paddingOn=${s.st.pad}
      .engine=${s}
      .batch=${s.lastForward?.tokens ?? EMPTY}
      .src=${s.lastForward?.src_tokens ?? EMPTY}
      .switches=${s.switches()}
      .train=${s.trainMode()}
      @tp-select=${(e: Select) => void s.patch(e.detail)}
    ></tp-architecture>`,
  },
  {
    name: 'attention',
    tag: 'tp-attention',
    get title() {
      return msg('Attention maps per layer and head');
    },
    needs: ['qkv'],
    render: (s) => html`<tp-attention
      .attention=${s.lastForward?.attention ?? EMPTY}
      .site=${s.site}
      .layer=${s.st.layer}
      .head=${s.st.head}
      .queryTokens=${s.queryTokens}
      .keyTokens=${s.keyTokens}
      .row=${s.shownRow}
      .ablate=${s.st.ablate}
      .lock=${s.st.lock}
      .scaleOn=${s.st.scale}
      .score=${s.info?.score ?? 'scaled_dot'}
      .posEncoding=${s.info?.pos_encoding ?? ''}
      .maxDistance=${s.info?.relative_max_distance ?? 0}
      .previous=${s.previous?.attention ?? EMPTY}
      .beforeLabel=${s.previous ? s.beforeLabel : ''}
      .reach=${generationReach(s)}
      @tp-select=${(e: Select) => void s.patch(e.detail)}
      @tp-ablate=${(e: CustomEvent<HeadRef>) => void s.toggleHead(e.detail)}
      @tp-focus=${(e: CustomEvent<{ i: number; j: number }>) => s.focusCell(e.detail)}
      @tp-row=${(e: CustomEvent<number>) => s.selectRow(e.detail)}
    ></tp-attention>`,
  },
  {
    name: 'masks',
    tag: 'tp-masks',
    get title() {
      return msg('Masks: which mask hid each cell, and the mask editor');
    },
    needs: [],
    render: (s) => html`<tp-masks
      class="wide"
      .masks=${s.lastForward?.masks ?? EMPTY}
      .site=${s.site}
      .mainSite=${s.info?.arch === 'encoder_only' ? 'encoder_self' : 'decoder_self'}
      .row=${s.shownRow}
      .queryTokens=${s.queryTokens}
      .keyTokens=${s.keyTokens}
      .mask=${s.st.mask}
      .promptLength=${s.inputRow.length || 1}
      .reach=${generationReach(s)}
      .lock=${s.st.lock}
      @tp-mask=${(e: CustomEvent<MaskEdit | null>) => void s.patch({ mask: e.detail })}
    ></tp-masks>`,
  },
  {
    // A model that generates: the next-token distribution and the sampling controls; a
    // classifier: its class probabilities; a tagger: the predicted token at each position.
    name: 'output',
    tag: 'tp-output',
    get title() {
      return msg('Output probabilities');
    },
    needs: [],
    render: (s) =>
      s.canGenerate()
        ? html`<tp-output
            .info=${s.info}
            .modelProbs=${s.lastForward?.model_probs ?? null}
            .sampleProbs=${s.lastForward?.next_probs ?? null}
            .sampling=${s.sampling()}
            .previousProbs=${s.previous?.model_probs ?? null}
            .previousSame=${s.previousSameInput}
            .sides=${s.previousSides()}
            .lock=${s.st.lock}
            @tp-sampling=${(e: CustomEvent<Partial<Sampling>>) => void s.patchSampling(e.detail)}
          ></tp-output>`
        : html`<tp-output
            .info=${s.info}
            .modelProbs=${s.lastForward?.model_probs ?? null}
            .sampleProbs=${s.lastForward?.next_probs ?? null}
            .classProbs=${s.lastForward?.class_probs ?? null}
            .predicted=${s.lastForward?.predicted ?? EMPTY}
            .classNames=${s.classNames}
            .inputTokens=${s.tokensAs('row', s.rowIds)}
            .sampling=${s.sampling()}
            .previousClassProbs=${s.previous?.class_probs ?? null}
            .previousSame=${s.previousSameInput}
            .sides=${s.previousSides()}
          ></tp-output>`,
  },
  {
    name: 'hidden',
    tag: 'tp-hidden',
    get title() {
      return msg('Residual stream norms per layer');
    },
    needs: [],
    render: (s) => html`<tp-hidden
      .states=${s.lastForward?.hidden ?? EMPTY}
      .info=${s.info}
      .tokens=${s.tokensAs('row', s.rowIds)}
      .srcTokens=${s.tokensAs('src', s.srcIds)}
      .row=${s.shownRow}
      .selectedLayer=${s.st.layer}
    ></tp-hidden>`,
  },
  {
    name: 'sqrt-dk',
    tag: 'tp-sqrt-dk',
    get title() {
      return msg('Why scores are divided by √d_k');
    },
    needs: [],
    render: (s) => html`<tp-sqrt-dk
      class="wide"
      .engine=${s}
      .dHead=${s.info?.d_head ?? 0}
    ></tp-sqrt-dk>`,
  },
  {
    name: 'saturation',
    tag: 'tp-saturation',
    get title() {
      return msg('Softmax saturation per head');
    },
    needs: [],
    render: (s) => html`<tp-saturation
      .attention=${s.lastForward?.attention ?? EMPTY}
      .previous=${s.previous?.attention ?? EMPTY}
      .site=${s.site}
      .layer=${s.st.layer}
      .row=${s.shownRow}
      .scaleOn=${s.st.scale}
      .score=${s.info?.score ?? 'scaled_dot'}
      .beforeLabel=${s.previous ? s.beforeLabel : ''}
      .sides=${s.previousSides()}
    ></tp-saturation>`,
  },
  {
    name: 'cost',
    tag: 'tp-cost',
    get title() {
      return msg('Parameters and FLOPs per component');
    },
    needs: ['cost'],
    render: (s) => html`<tp-cost
      .report=${s.costReport}
      .info=${s.info}
      @tp-heads=${(e: CustomEvent<number>) => s.setHeads(e.detail)}
    ></tp-cost>`,
  },
  {
    name: 'schedule',
    tag: 'tp-schedule',
    get title() {
      return msg('Noam learning-rate schedule');
    },
    needs: ['schedule'],
    render: (s) => html`<tp-schedule .schedule=${s.schedule} @tp-warmup=${(e: CustomEvent<number>) => s.setWarmup(e.detail)}
      @tp-cooldown=${(e: CustomEvent<number>) => s.setCooldown(e.detail)}
    ></tp-schedule>`,
  },
  {
    // Where a step's time goes on this device, CPU against GPU as the model widens (from the whole engine, fetched when first seen).
    name: 'time',
    tag: 'tp-time',
    get title() {
      return msg('Where the time goes: CPU against GPU as the model widens', { id: 'view.time.title' });
    },
    needs: [],
    // It measures on sight where it is the page's one view (a lesson, an embed) or its picture stands alone (no button to press); among other views it waits for its button (a measurement keeps a core busy for seconds).
    render: (s) => html`<tp-time class="wide" .spawn=${spawnEngine} .auto=${(s.st.views.length === 1 && s.st.views[0] === 'time') || s.st.chrome === 'none'}></tp-time>`,
  },
  {
    name: 'positions',
    tag: 'tp-positions',
    get title() {
      return msg('The position encoding of the loaded model');
    },
    needs: [],
    render: (s) => html`<tp-positions
      class="wide"
      .engine=${s}
      .info=${s.info}
      .tokens=${s.info?.arch === 'decoder_only' ? s.inputRow : EMPTY}
      .layer=${s.site === 'cross' ? 0 : s.st.layer}
      .head=${s.st.head}
    ></tp-positions>`,
  },
  {
    name: 'embedding-scale',
    tag: 'tp-embedding-scale',
    get title() {
      return msg('Token embedding and position vector sizes, with and without ×√d_model');
    },
    needs: [],
    render: (s) => html`<tp-embedding-scale
      .engine=${s}
      .info=${s.info}
      .tokens=${s.inputRow}
      .labels=${s.tokensAs('input', s.inputRow)}
    ></tp-embedding-scale>`,
  },
  {
    name: 'order',
    tag: 'tp-order',
    get title() {
      return msg('Order-blindness without positions');
    },
    needs: [],
    render: (s) => html`<tp-order .engine=${s} .base=${s.modelsBase} .pageModel=${s.st.model} .loaded=${s.customModel}></tp-order>`,
  },
  {
    name: 'extrapolation',
    tag: 'tp-extrapolation',
    get title() {
      return msg('Train short, test long: accuracy per position');
    },
    needs: [],
    render: (s) => html`<tp-extrapolation class="wide" .engine=${s} .base=${s.modelsBase} .manifest=${s.manifest} .pageModel=${s.st.model} .loaded=${s.customModel} .auto=${s.st.chrome === 'none'}></tp-extrapolation>`,
  },
  {
    name: 'ffn',
    tag: 'tp-ffn',
    get title() {
      return msg('The FFN is position-wise: edit one token, see which rows change');
    },
    needs: [],
    render: (s) => html`<tp-ffn
      class="wide"
      .engine=${s}
      .info=${s.info}
      .input=${s.sequenceInput()}
      .switches=${s.switches()}
      .train=${s.trainMode()}
      .layer=${s.st.layer}
    ></tp-ffn>`,
  },
  {
    name: 'no-leak',
    tag: 'tp-no-leak',
    get title() {
      return msg('The residual does not leak the future');
    },
    needs: [],
    render: (s) => html`<tp-no-leak
      class="wide"
      .engine=${s}
      .info=${s.info}
      .input=${s.sequenceInput()}
      .switches=${s.switches()}
      .masks=${s.lastForward?.masks ?? EMPTY}
      .train=${s.trainMode()}
    ></tp-no-leak>`,
  },
  {
    name: 'norms',
    tag: 'tp-norms',
    get title() {
      return msg('LayerNorm vs BatchNorm on a batch');
    },
    needs: [],
    render: (s) => html`<tp-norms
      class="wide"
      .engine=${s}
      .info=${s.info}
      .tokens=${(() => {
        const q = s.sequenceInput();
        return q ? (q.src ?? q.tokens) : EMPTY;
      })()}
      .seed=${s.st.seed + s.draw}
      .base=${s.modelsBase}
      .manifest=${s.manifest}
      .model=${s.st.model}
    ></tp-norms>`,
  },
  {
    name: 'dropout',
    tag: 'tp-dropout',
    get title() {
      return msg('Dropout in train mode, the identity in eval mode');
    },
    needs: [],
    render: (s) => html`<tp-dropout
      class="wide"
      .engine=${s}
      .info=${s.info}
      .input=${s.sequenceInput()}
      .seed=${s.st.seed + s.draw}
      .p=${s.st.drop}
    ></tp-dropout>`,
  },
  {
    name: 'parallel',
    tag: 'tp-parallel',
    get title() {
      return msg('Parallel training, serial inference: one pass against token by token, with and without the KV cache');
    },
    needs: [],
    render: (s) => html`<tp-parallel
      class="wide"
      .engine=${s}
      .info=${s.info}
      .prompt=${s.info?.arch === 'decoder_only' ? s.inputRow : EMPTY}
    ></tp-parallel>`,
  },
  {
    name: 'beams',
    tag: 'tp-beams',
    get title() {
      return msg('Beam search as a tree');
    },
    needs: [],
    available: (s) => s.canGenerate(),
    render: (s) => html`<tp-beams
      class="wide"
      .info=${s.info}
      .steps=${s.gen.beamSteps}
      .strategy=${s.st.strategy}
      .generated=${s.gen.generated}
      .done=${s.gen.done}
      .lock=${s.st.lock}
      .auto=${s.st.chrome === 'none' && !!s.lastForward}
      @tp-beam=${() => void beamSearch(s)}
    ></tp-beams>`,
  },
  {
    // Hand edits of the loaded model's weights: every view recomputes from the edited model.
    name: 'weights',
    tag: 'tp-weights',
    get title() {
      return msg('Edit a weight, watch everything change');
    },
    needs: [],
    render: (s) => html`<tp-weights
      class="wide"
      .editor=${s.weights}
      .info=${s.info}
      .edits=${s.weights.current}
      .promptIds=${s.inputRow}
      .modelName=${s.customModel || s.st.model}
      .lock=${s.st.lock}
    ></tp-weights>`,
  },
  {
    // Loaded when it first comes into view (it brings uPlot with it).
    name: 'lab',
    tag: 'tp-lab',
    get title() {
      return msg('The lab: train a variant and compare runs');
    },
    needs: [],
    render: (s) => html`<tp-lab class="wide" .themeKey=${s.st.theme} .link=${s.st.train} .lock=${s.st.lock}></tp-lab>`,
  },
] as const satisfies readonly ViewDef[];

/**
 * Switch the decoding to beam search; shown alone (`chrome=none`), the view also starts
 * the search when nothing plays, so that its tree is drawn without a click.
 */
async function beamSearch(s: PlaygroundStore): Promise<void> {
  await s.patch({ strategy: 'beam' });
  if (s.st.chrome === 'none' && !s.gen.playing && s.gen.generated.length === 0) await s.gen.play();
}

/** View names accepted under another spelling (old name → registered name); see ../state/url.ts. */
export { VIEW_ALIASES } from '../state/url';

/** A registered view's name. */
export type ViewName = (typeof VIEWS)[number]['name'];

/** Every view name, in page order. */
export const VIEW_NAMES: readonly ViewName[] = VIEWS.map((v) => v.name);

/** The registered view of this name. */
export function viewNamed(name: string): ViewDef | undefined {
  return (VIEWS as readonly ViewDef[]).find((v) => v.name === name);
}

/** What the view of this name needs from the engine. */
export function needsOf(name: string): readonly Need[] {
  return viewNamed(name)?.needs ?? [];
}

/** The rows to draw for these names, in page order, for the loaded model. */
export function viewsToDraw(s: PlaygroundStore, names: readonly string[]): readonly ViewDef[] {
  return (VIEWS as readonly ViewDef[]).filter((v) => names.includes(v.name) && (v.available ? v.available(s) : true));
}

/** The rows to draw for these names, in the order of `names`, for the loaded model. */
export function viewsInOrder(s: PlaygroundStore, names: readonly string[]): readonly ViewDef[] {
  return names.map(viewNamed).filter((v): v is ViewDef => v !== undefined && (v.available ? v.available(s) : true));
}
