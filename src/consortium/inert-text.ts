/**
 * Text from outside made inert before it reaches a terminal or a line-oriented file (issue 32,
 * T1). A server's round stage or error message, a silo name in a utilities file, a label read back
 * from a queue: any of them may carry control characters that a terminal obeys — ESC sequences
 * that clear the screen, set the window title, move the cursor or recolour text; a carriage
 * return or newline that overwrites or forges a line ("report accepted"); bidirectional overrides
 * that show text in another order than it is stored. The owner of that rule is this module: every
 * place that prints or tabulates text it did not write passes it through {@link inertText} (one
 * field or one line) or {@link inertLines} (a message of several lines that this program composed).
 *
 * What goes: every C0 control (U+0000–U+001F) and DEL (U+007F), every C1 control (U+0080–U+009F,
 * which includes the 8-bit CSI U+009B and NEL U+0085), the line and paragraph separators
 * U+2028/U+2029, and the bidirectional embeddings, overrides and isolates U+202A–U+202E and
 * U+2066–U+2069. Whitespace controls (tab, newline, carriage return, vertical tab, form feed, NEL,
 * U+2028/U+2029) become one space, so words stay apart but a field stays on its line; the others are
 * dropped. An ESC sequence loses its ESC, so what is left ("[2J") is printed as the plain characters
 * it is.
 */

/** Whitespace controls: replaced by a space (a field keeps its words apart, and its one line). */
const SPACE_LIKE = /[\t\n\v\f\r\u0085\u2028\u2029]/g;

/** Every other C0/C1 control, DEL and bidirectional control: dropped. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * One field or one line of outside text, safe to print: no character a terminal obeys, and no line
 * break (each becomes a space).
 * @throws TypeError when `text` is not a string.
 */
export function inertText(text: string): string {
  if (typeof text !== 'string') throw new TypeError(`text: expected a string, got ${typeof text}`);
  return text.replace(SPACE_LIKE, ' ').replace(CONTROL, '');
}

/**
 * A message of several lines, safe to print: each line as {@link inertText} makes it, joined by
 * `\n` again. For text this program composed around outside fields that were not each made inert
 * (an error message quoting a server's answer): escapes go, the program's own line breaks stay.
 * A line break inside an outside field still starts a line here, so fields that end up in a table
 * or on one line pass through {@link inertText} where they are read.
 * @throws TypeError when `text` is not a string.
 */
export function inertLines(text: string): string {
  if (typeof text !== 'string') throw new TypeError(`text: expected a string, got ${typeof text}`);
  return text
    .split(/\r\n|\n/)
    .map(inertText)
    .join('\n');
}

/** Whether `text` holds a character {@link inertText} would change. */
export function hasControlCharacters(text: string): boolean {
  return inertText(text) !== text;
}

/** ASCII punctuation that markdown (CommonMark, GFM tables) reads as syntax or as HTML. */
const MARKDOWN_SYNTAX = /[\\`*_{}[\]()<>|&!~#]/g;

/**
 * Outside text as literal markdown (report.md): inert as {@link inertText} makes it, then every
 * character CommonMark or a GFM table would read as syntax — emphasis, code, links, images, raw
 * HTML (`<`, `&`), a cell break (`|`), a heading — backslash-escaped, so a renderer shows the
 * characters themselves. Hyphens and dots are left alone (`silo-0` stays readable).
 * @throws TypeError when `text` is not a string.
 */
export function markdownText(text: string): string {
  return inertText(text).replace(MARKDOWN_SYNTAX, (ch) => `\\${ch}`);
}
