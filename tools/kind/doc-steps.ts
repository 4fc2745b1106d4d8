// The runnable steps of a Markdown page, as the kind tier runs docs/INSTALL.md: each is a fenced
// block whose info string is `sh step=<id>` (GitHub shows it as a plain `sh` block), run as
// written; what the page says a reader then sees is a block `text step=<id>` after it. Pure: the
// page's text in, its steps out; e2e/kind/install.test.ts runs them, in order, in one shell.

export interface DocStep {
  id: string;
  /** The block's text, as written (no fence lines, the fence's indentation removed). */
  commands: string;
  /** The output the page shows for the step, if it shows any. */
  shown?: string;
  /** 1-based line of the step's opening fence. */
  line: number;
}

export class DocStepsError extends Error {}

interface Block {
  info: string;
  text: string;
  line: number;
}

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const STEP_ID = /^[a-z][a-z0-9-]*$/;

/** The fenced blocks of a Markdown text, in order (indented up to three spaces, or in a list). */
export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    // A fence inside a list item is indented further: take any indentation, and strip as much.
    const opening = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[index] ?? '');
    if (!opening) continue;
    const [, indent = '', fence = '', info = ''] = opening;
    if (fence.startsWith('`') && info.includes('`')) continue;
    const body: string[] = [];
    let closed = false;
    for (index++; index < lines.length; index++) {
      const line = lines[index] ?? '';
      const closing = FENCE.exec(line.slice(Math.min(indent.length, leading(line))));
      if (closing && closing[2]?.[0] === fence[0] && (closing[2]?.length ?? 0) >= fence.length) {
        if ((closing[3] ?? '').trim() === '') {
          closed = true;
          break;
        }
      }
      body.push(line.slice(Math.min(indent.length, leading(line))));
    }
    const line = index - body.length;
    if (!closed) throw new DocStepsError(`line ${line}: a fenced block is never closed`);
    blocks.push({ info: info.trim(), text: body.join('\n'), line });
  }
  return blocks;
}

function leading(line: string): number {
  return line.length - line.trimStart().length;
}

/** `sh step=install` → { language: 'sh', step: 'install' }. */
function parseInfo(info: string): { language: string; step?: string } {
  const [language = '', ...words] = info.split(/\s+/);
  const step = words.find((word) => word.startsWith('step='))?.slice('step='.length);
  return step === undefined ? { language } : { language, step };
}

/**
 * The page's steps, in the order of their command blocks. Throws on a step named twice, an output
 * block before (or without) its step's commands, a second output block for a step, a step block
 * in another language than `sh`, or an id that is not lower-case words joined by `-`.
 */
export function docSteps(markdown: string): DocStep[] {
  const steps: DocStep[] = [];
  for (const block of fencedBlocks(markdown)) {
    const { language, step: id } = parseInfo(block.info);
    if (id === undefined) continue;
    const where = `line ${block.line}, step ${id}`;
    if (!STEP_ID.test(id)) throw new DocStepsError(`${where}: not a step id (a-z, 0-9 and -)`);
    const known = steps.find((step) => step.id === id);
    if (language === 'sh') {
      if (known) throw new DocStepsError(`${where}: the step is also at line ${known.line}`);
      steps.push({ id, commands: block.text, line: block.line });
    } else if (language === 'text') {
      if (!known) throw new DocStepsError(`${where}: output shown before the step's commands`);
      if (known.shown !== undefined) throw new DocStepsError(`${where}: output shown twice`);
      known.shown = block.text;
    } else {
      throw new DocStepsError(`${where}: a step is \`sh\`, its output \`text\` (not ${language})`);
    }
  }
  return steps;
}

/** A line of output: the whole line (trailing blanks aside), or a pattern one line matches. */
export type ExpectedLine = string | RegExp;

/** Which of `expected` no line of `text` is (a string) or matches (a RegExp). */
export function missingLines(text: string, expected: readonly ExpectedLine[]): ExpectedLine[] {
  const lines = text.split('\n').map((line) => line.trimEnd());
  return expected.filter((want) =>
    typeof want === 'string' ? !lines.includes(want) : !lines.some((line) => want.test(line)),
  );
}
