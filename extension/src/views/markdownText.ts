// Text from an agent or a file inside Markdown the editor renders (a hover, a tooltip, a
// read-only document): shown as text, never as markup of its own — a line of "```" in a
// worker's file does not close the block it is shown in, and a link or an image it wrote
// (one that calls home when rendered, or whose words lie about its target) stays text.

/** The fenced block for text: a fence longer than any backtick run inside it. */
export function fenced(text: string, lang = 'text'): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text.replace(/\n$/, '')}\n${fence}`;
}

/** Text with every character Markdown reads as markup escaped (entities too: &#x202e; is a bidi override once rendered). */
export function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+!|<>&~]/g, (c) => '\\' + c);
}

/**
 * Text for a notification: VS Code makes [words](https:…, command:…, file:…) in a
 * notification's message a link that opens the address or runs the command — a file name or
 * an error that quotes an agent's words could offer the person a click that types into their
 * terminal. A space between the brackets and the parenthesis keeps it text.
 */
export function noLinks(s: string): string {
  return s.replace(/\]\(/g, '] (');
}
