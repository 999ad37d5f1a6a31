/**
 * The Soma language for CodeMirror 6, as a stream parser.
 *
 * It colours every keyword and section word of the grammar (from the one
 * table, keywords.generated.ts), built-in and user type names, numbers and
 * durations, `->` edges and `*` wildcards, `//` and nesting `/* *\/` comments,
 * strings and triple-quoted strings whose `{…}` interpolations are read as
 * code (`{{` and `}}` stay literal text). It tracks brace depth for
 * indentation after `{`, and its language data gives Ctrl-/ its comment
 * tokens and bracket closing. In a notebook, a magic line (`%name …`,
 * `?name`) is drawn as such, and a cell whose first line is `%%toml` is
 * TOML below that line (toml.ts).
 */

import {
  HighlightStyle,
  IndentContext,
  LanguageSupport,
  StreamLanguage,
  StringStream,
  syntaxHighlighting
} from '@codemirror/language';
import { tags } from '@lezer/highlight';

import { KEYWORDS, SLOT_PROPERTIES, TYPES } from './keywords.generated';
import { TomlState, tomlToken } from './toml';

/** What an open construct is: a string, a triple-quoted string, an interpolation, a brace inside one. */
type Frame = '"' | '"""' | 'interpolation' | 'brace';

/** The parser's state between lines. */
export interface SomaState {
  /** Open strings and interpolations, innermost last. */
  frames: Frame[];
  /** How deep the current block comment nests (0 outside one). */
  commentDepth: number;
  /** Code braces open at this point, for indentation. */
  braceDepth: number;
  /** The previous word was `on`: the next one names a handler. */
  afterOn: boolean;
  /** What the text is, decided at its first non-blank line: Soma, or TOML under a `%%toml` line. */
  body: 'undecided' | 'soma' | 'toml';
  /** The TOML tokenizer's state (a `%%toml` cell). */
  toml: TomlState;
}

/** The highlighting tag of each keyword kind (all are kinds of `keyword`). */
const KIND_TOKENS: Readonly<Record<string, string>> = {
  section: 'definitionKeyword',
  clause: 'modifier',
  statement: 'controlKeyword',
  test: 'keyword',
  constant: 'bool'
};

const BUILTIN_TYPES = new Set(TYPES);
const PROPERTIES = new Set(SLOT_PROPERTIES);
const DURATION = /^[0-9][0-9_]*(ms|min|years|year|s|h|d)(?![A-Za-z0-9_])/;
const RADIX_INT = /^0(x[0-9A-Fa-f][0-9A-Fa-f_]*|b[01][01_]*|o[0-7][0-7_]*)/;
const FLOAT = /^[0-9][0-9_]*(\.[0-9][0-9_]*([eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)/;
const INT = /^[0-9][0-9_]*/;
/** A kernel magic line, as the kernel reads one (`%name`, `%%name`, `?name`, `??name`, a bare `?`). */
const MAGIC_LINE = /^\s*(%%?[A-Za-z]|\?\??[A-Za-z_]|\?\s*$)/;
const OPERATOR = /^(\|>|\?\?|->|=>|==|!=|<=|>=|&&|\|\||\.\.|[-+*/]=|[-+*/%<>!=?|])/;

function top(state: SomaState): Frame | undefined {
  return state.frames[state.frames.length - 1];
}

/** Inside a block comment: consume up to its end (nesting `/*` deepens it). */
function blockComment(stream: StringStream, state: SomaState): string {
  while (!stream.eol()) {
    if (stream.match('/*')) {
      state.commentDepth++;
    } else if (stream.match('*/')) {
      state.commentDepth--;
      if (state.commentDepth === 0) {
        break;
      }
    } else {
      stream.next();
    }
  }
  return 'comment';
}

/** Inside a string's text: an escape, a literal `{{`/`}}`, an interpolation's `{`, the closing quote or text. */
function stringText(stream: StringStream, state: SomaState, quote: '"' | '"""'): string {
  if (stream.match(quote)) {
    state.frames.pop();
    return 'string';
  }
  if (quote === '"' && stream.match(/^\\(u\{[0-9a-fA-F]+\}|.)/)) {
    return 'escape';
  }
  if (stream.match('{{') || stream.match('}}')) {
    return 'string';
  }
  if (stream.eat('{')) {
    state.frames.push('interpolation');
    return 'string.special';
  }
  const text = quote === '"' ? /^[^"\\{}]+/ : /^([^"{}]|"(?!""))+/;
  if (!stream.match(text)) {
    stream.next();
  }
  return 'string';
}

/** A word: a keyword, a handler's name after `on`, a slot property, a call or a plain name. */
function word(stream: StringStream, state: SomaState, text: string): string | null {
  const afterOn = state.afterOn;
  state.afterOn = false;
  const before = stream.string.charAt(stream.start - 1);
  if (before === '.') {
    return stream.match(/^\s*\(/, false) ? 'propertyName.function' : 'propertyName';
  }
  if (afterOn) {
    return 'variableName.function.definition';
  }
  const kind = KEYWORDS[text];
  if (kind !== undefined) {
    state.afterOn = text === 'on';
    return KIND_TOKENS[kind];
  }
  if (PROPERTIES.has(text) && /\[[^\]]*$/.test(stream.string.slice(0, stream.start))) {
    return 'attributeName';
  }
  return stream.match(/^\s*\(/, false) ? 'variableName.function' : 'variableName';
}

/** A bracket: code braces count for indentation; inside an interpolation they nest it. */
function bracket(state: SomaState, char: string): string {
  const inInterpolation = top(state) === 'interpolation' || top(state) === 'brace';
  if (char === '{') {
    if (inInterpolation) {
      state.frames.push('brace');
    } else {
      state.braceDepth++;
    }
    return 'brace';
  }
  if (char === '}') {
    if (top(state) === 'interpolation') {
      state.frames.pop();
      return 'string.special';
    }
    if (top(state) === 'brace') {
      state.frames.pop();
    } else {
      state.braceDepth = Math.max(0, state.braceDepth - 1);
    }
    return 'brace';
  }
  return char === '(' || char === ')' ? 'paren' : 'squareBracket';
}

/** One token of code (outside string text and comments). */
function code(stream: StringStream, state: SomaState): string | null {
  if (stream.eatSpace()) {
    return null;
  }
  if (stream.match('//')) {
    stream.skipToEnd();
    return 'lineComment';
  }
  if (stream.match('/*')) {
    state.commentDepth = 1;
    return blockComment(stream, state);
  }
  if (stream.match('"""')) {
    state.frames.push('"""');
    return 'string';
  }
  if (stream.eat('"')) {
    state.frames.push('"');
    return 'string';
  }
  if (stream.match(DURATION)) {
    return 'number.special';
  }
  if (stream.match(RADIX_INT) || stream.match(FLOAT) || stream.match(INT)) {
    return 'number';
  }
  const name = stream.match(/^[A-Za-z_][A-Za-z0-9_]*/) as RegExpMatchArray | null;
  if (name) {
    const text = name[0];
    if (/^[A-Z]/.test(text)) {
      state.afterOn = false;
      return BUILTIN_TYPES.has(text) ? 'typeName.standard' : 'typeName';
    }
    return word(stream, state, text);
  }
  if (stream.match(/^\*(?=\s*->)/)) {
    return 'operator.special';
  }
  if (stream.match('->')) {
    return 'controlOperator';
  }
  if (stream.match(OPERATOR)) {
    return 'operator';
  }
  const char = stream.next() as string;
  if ('{}()[]'.includes(char)) {
    return bracket(state, char);
  }
  return ',.:;'.includes(char) ? 'punctuation' : null;
}

/** At the text's first non-blank line: a `%%toml` line makes the rest TOML, anything else makes it Soma. */
function decideBody(stream: StringStream, state: SomaState): string | null {
  if (stream.match(/^\s*%%toml\b/, false)) {
    state.body = 'toml';
    stream.skipToEnd();
    return 'meta';
  }
  state.body = 'soma';
  return token(stream, state);
}

/** The stream parser's token function. */
function token(stream: StringStream, state: SomaState): string | null {
  if (state.body === 'undecided') {
    return decideBody(stream, state);
  }
  if (state.body === 'toml') {
    return tomlToken(stream, state.toml);
  }
  const outside = state.commentDepth === 0 && state.frames.length === 0;
  if (outside && stream.sol() && stream.match(MAGIC_LINE, false)) {
    stream.skipToEnd();
    return 'meta';
  }
  if (state.commentDepth > 0) {
    return blockComment(stream, state);
  }
  const frame = top(state);
  if (frame === '"' || frame === '"""') {
    return stringText(stream, state, frame);
  }
  return code(stream, state);
}

/** Indent one unit per open brace; a line starting with `}` one less. Inside a string or comment: no opinion. */
function indent(state: SomaState, textAfter: string, context: IndentContext): number | null {
  if (state.commentDepth > 0 || state.frames.length > 0 || state.body === 'toml') {
    return null;
  }
  const depth = state.braceDepth - (/^\s*\}/.test(textAfter) ? 1 : 0);
  return Math.max(0, depth) * context.unit;
}

/** The Soma stream language. */
export const somaLanguage = StreamLanguage.define<SomaState>({
  name: 'soma',
  startState: () => ({
    frames: [],
    commentDepth: 0,
    braceDepth: 0,
    afterOn: false,
    body: 'undecided',
    toml: { multiline: null }
  }),
  copyState: state => ({ ...state, frames: state.frames.slice(), toml: { ...state.toml } }),
  token,
  indent,
  languageData: {
    commentTokens: { line: '//', block: { open: '/*', close: '*/' } },
    closeBrackets: { brackets: ['(', '[', '{', '"'] },
    indentOnInput: /^\s*\}$/,
    wordChars: '_'
  }
});

/**
 * Colours for the tags JupyterLab's own highlight style leaves plain: type
 * names (built-in ones as builtins), in the theme's variables.
 */
const typeNames = HighlightStyle.define([
  { tag: tags.standard(tags.typeName), color: 'var(--jp-mirror-editor-builtin-color)' },
  { tag: tags.typeName, color: 'var(--jp-mirror-editor-variable-2-color)' }
]);

/** Soma language support for an editor (what the language registry's loader returns). */
export function soma(): LanguageSupport {
  return new LanguageSupport(somaLanguage, [syntaxHighlighting(typeNames)]);
}
