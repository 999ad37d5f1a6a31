// SVG files are imported as their text (JupyterLab's builder loads them as source).
declare module '*.svg' {
  const text: string;
  export default text;
}
