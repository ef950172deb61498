// The lab's look: the form's groups and fields, the training controls, the plots' grid,
// the runs' table, the summary of the model in use, and the drop zone for checkpoints.

import { css } from 'lit';

export const labStyles = css`
  .lab {
    display: grid;
    gap: var(--tp-space-3);
  }
  .lab.drop {
    outline: 3px dashed var(--tp-accent);
    outline-offset: 4px;
  }
  h2 .sub {
    font-weight: normal;
  }
  .intro {
    margin: 0 0 var(--tp-space-2);
    font-size: var(--tp-text-md);
  }
  .groups {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(min(300px, 100%), 1fr));
    gap: 10px;
  }
  fieldset {
    border: 1px solid var(--tp-line);
    border-radius: 8px;
    margin: 0;
    padding: 6px 10px 8px;
    min-width: 0;
  }
  legend {
    font-weight: 600;
    font-size: var(--tp-text-md);
    padding: 0 var(--tp-space-1);
  }
  .field {
    display: grid;
    grid-template-columns: minmax(8.5em, auto) minmax(0, 1fr);
    gap: 2px 8px;
    align-items: center;
    margin: 6px 0;
    font-size: var(--tp-text-md);
  }
  .field .help,
  .field .note {
    grid-column: 1 / -1;
    font-size: var(--tp-text-xs);
    color: var(--tp-muted);
    margin: 0;
  }
  .field .note {
    color: var(--tp-warn);
  }
  .field.off label {
    color: var(--tp-muted);
  }
  .field input[type='number'],
  .field select {
    width: 100%;
    min-width: 0;
    box-sizing: border-box;
  }
  .field input[type='checkbox'] {
    justify-self: start;
  }
  .field .nullable {
    display: flex;
    gap: 6px;
    align-items: center;
  }
  .actions,
  .buttons {
    display: flex;
    flex-wrap: wrap;
    gap: var(--tp-space-2);
    align-items: center;
    font-size: var(--tp-text-md);
  }
  .actions .grow {
    flex: 1;
  }
  button.primary {
    background: var(--tp-accent);
    border-color: var(--tp-accent);
    color: var(--tp-bg);
    font-weight: 600;
  }
  button:disabled {
    opacity: 0.5;
    cursor: default;
  }
  .experiments {
    display: flex;
    flex-wrap: wrap;
    gap: var(--tp-space-2);
    align-items: center;
    font-size: var(--tp-text-md);
  }
  .experiments p {
    margin: 0;
    flex-basis: 100%;
    color: var(--tp-muted);
    font-size: var(--tp-text-sm);
  }
  .from {
    font-size: var(--tp-text-sm);
    color: var(--tp-accent);
    margin: var(--tp-space-1) 0 0;
  }
  .plots {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(min(380px, 100%), 1fr));
    gap: 10px;
  }
  .table {
    overflow-x: auto;
  }
  table {
    border-collapse: collapse;
    width: 100%;
    font-size: var(--tp-text-sm);
  }
  th,
  td {
    border-bottom: 1px solid var(--tp-line);
    padding: 4px 6px;
    text-align: left;
    vertical-align: middle;
    white-space: nowrap;
  }
  td.num,
  th.num {
    text-align: right;
    font-variant-numeric: tabular-nums;
  }
  td.label {
    white-space: normal;
    min-width: 10em;
  }
  /* Where a run trains and why: a sentence with both times when the CPU won the race. */
  td[data-backend] {
    white-space: normal;
    min-width: 14em;
  }
  tr.hidden td {
    color: var(--tp-muted);
  }
  tr.selected {
    background: var(--tp-accent-soft);
  }
  td .row-actions {
    display: flex;
    flex-wrap: wrap;
    gap: var(--tp-space-1);
  }
  td button {
    padding: 1px 6px;
    font-size: var(--tp-text-xs);
  }
  .swatch {
    display: inline-block;
    width: 12px;
    height: 12px;
    border-radius: 3px;
    vertical-align: middle;
  }
  .status-failed {
    color: var(--tp-error);
  }
  .alert {
    border: 2px solid var(--tp-error);
    border-radius: 8px;
    padding: 6px 10px;
    font-size: var(--tp-text-md);
  }
  .health ul {
    margin: 0.25rem 0;
    padding-left: 1.25rem;
  }
  .health h3 {
    font-size: 1rem;
    margin: 0.5rem 0 0;
  }
  .health li.stopped {
    font-weight: 600;
  }
  .said {
    font-size: var(--tp-text-md);
    color: var(--tp-muted);
    min-height: 1.2em;
  }
  .used dl {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(min(220px, 100%), 1fr));
    gap: 2px 14px;
    margin: 6px 0 0;
    font-size: var(--tp-text-sm);
  }
  .used dl div {
    display: flex;
    gap: 6px;
  }
  .used dt {
    color: var(--tp-muted);
  }
  .used dd {
    margin: 0;
  }
  .dropzone {
    border: 1px dashed var(--tp-line);
    border-radius: 8px;
    padding: 6px 10px;
    color: var(--tp-muted);
    font-size: var(--tp-text-sm);
  }
  input[type='file'] {
    font-size: var(--tp-text-sm);
  }
  .text-task {
    margin: 12px 0;
  }
  .text-task h3,
  .text-samples h3 {
    margin: 0 0 4px;
    font-size: var(--tp-text-md, 1rem);
  }
  .text-task label {
    display: block;
    margin: 6px 0 2px;
  }
  .text-task textarea {
    display: block;
    width: 100%;
    box-sizing: border-box;
    min-height: 8em;
    font: inherit;
    color: inherit;
    background: var(--tp-bg);
    border: 1px solid var(--tp-line);
    border-radius: 6px;
    padding: 6px;
    resize: vertical;
  }
  .text-samples ol {
    margin: 4px 0;
    padding-left: 1.5em;
  }
  .text-samples li {
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
  .text-samples .prompt {
    font-weight: 600;
  }
`;
