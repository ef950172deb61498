// Waiting for the browser to draw: the element's update scheduling (../components/
// transformer-playground.ts) uses these to let a paint through before heavy work.

/**
 * Settles once the next frame has been drawn (a task after its animation frame), or after
 * 100 ms where the page draws no frames (a hidden tab).
 */
export function afterNextPaint(): Promise<void> {
  return new Promise((ok) => {
    const timer = setTimeout(ok, 100);
    requestAnimationFrame(() =>
      setTimeout(() => {
        clearTimeout(timer);
        ok();
      }, 0),
    );
  });
}

/** Settles at the next animation frame (or after 100 ms where the page draws none). */
export function nextFrame(): Promise<void> {
  return new Promise((ok) => {
    const timer = setTimeout(ok, 100);
    requestAnimationFrame(() => {
      clearTimeout(timer);
      ok();
    });
  });
}
