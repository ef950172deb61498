// Vite's `?url` imports: the built file's URL (a stylesheet the lab links in its shadow root).
declare module '*?url' {
  const url: string;
  export default url;
}
