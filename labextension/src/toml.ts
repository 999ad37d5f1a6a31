/**
 * TOML for the body of a `%%toml` cell, as a stream tokenizer the Soma
 * language hands its lines to: `#` comments, `[table]` and `[[array]]`
 * headers, keys (bare, quoted and dotted) before `=`, basic, literal and
 * multi-line strings with their escapes, numbers, dates and booleans.
 */

import { StringStream } from '@codemirror/language';

/** What a TOML line may leave open: a multi-line string. */
export interface TomlState {
  /** The delimiter of the multi-line string open at the end of the last line, if any. */
  multiline: '"""' | "'''" | null;
}

const HEADER = /^\[\[?\s*[^\]\n]*\]\]?/;
const KEY = /^([A-Za-z0-9_-]+|"([^"\\]|\\.)*"|'[^']*')(?=\s*[=.])/;
const DATE = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?/;
const NUMBER = /^[+-]?(0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|inf|nan|\d[\d_]*(\.\d[\d_]*)?([eE][+-]?\d+)?)/;

/** Inside a multi-line string: an escape (basic strings only), the closing delimiter or text. */
function multilineText(stream: StringStream, state: TomlState, close: '"""' | "'''"): string {
  if (stream.match(close)) {
    stream.eat(close.charAt(0));
    stream.eat(close.charAt(0)); // up to two quotes just before the delimiter belong to the string
    state.multiline = null;
    return 'string';
  }
  if (close === '"""' && stream.match(/^\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)/)) {
    return 'escape';
  }
  if (!stream.match(close === '"""' ? /^[^"\\]+/ : /^[^']+/)) {
    stream.next();
  }
  return 'string';
}

/** A one-line basic string after its opening `"`: escapes apart, up to the closing quote or the line's end. */
function basicString(stream: StringStream): string {
  while (!stream.eol()) {
    const char = stream.next();
    if (char === '\\') {
      stream.next();
    } else if (char === '"') {
      break;
    }
  }
  return 'string';
}

/** One TOML token of a `%%toml` cell's body. */
export function tomlToken(stream: StringStream, state: TomlState): string | null {
  if (state.multiline !== null) {
    return multilineText(stream, state, state.multiline);
  }
  if (stream.eatSpace()) {
    return null;
  }
  if (stream.eat('#')) {
    stream.skipToEnd();
    return 'lineComment';
  }
  const lineStart = stream.string.slice(0, stream.pos).trim() === '';
  if (lineStart && stream.match(HEADER)) {
    return 'heading';
  }
  if (stream.match(KEY)) {
    return 'propertyName';
  }
  for (const delimiter of ['"""', "'''"] as const) {
    if (stream.match(delimiter)) {
      state.multiline = delimiter;
      return 'string';
    }
  }
  if (stream.eat('"')) {
    return basicString(stream);
  }
  if (stream.match(/^'[^'\n]*'?/)) {
    return 'string';
  }
  if (stream.match(/^(true|false)(?![A-Za-z0-9_-])/)) {
    return 'bool';
  }
  if (stream.match(DATE) || stream.match(NUMBER)) {
    return 'number';
  }
  const char = stream.next() as string;
  if (char === '=') {
    return 'definitionOperator';
  }
  return '[]{}'.includes(char) ? 'squareBracket' : ',.'.includes(char) ? 'punctuation' : null;
}
