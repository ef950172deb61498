// The playground's entry: defines <transformer-playground> and its parts. Embedding it
// takes one <script type="module" src=".../playground.js"> and the element.

export { TransformerPlayground } from './components/transformer-playground';
export { EngineClient } from './engine/client';
export { parseHash, formatHash } from './state/url';
export { PlaygroundStore } from './state/store';
export { VIEWS, VIEW_NAMES } from './views/registry';
export { viewToSvg, svgToPng } from './ui/export';
