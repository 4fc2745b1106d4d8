// What a terminal shows after a program wrote to it: the text left on the screen once carriage
// returns, cursor moves and erasures are applied. The plugin redraws its progress block in place
// on a terminal and erases it before the grant (cli/progress-view.ts), so what a person sees is
// not what the program wrote; the docs show what a person sees.

const ESC = '\x1b';

/** A terminal of unbounded height: lines of text and a cursor. */
export class Screen {
  private readonly rows: string[] = [''];
  private row = 0;
  private column = 0;
  private pending = '';

  write(text: string): void {
    const input = this.pending + text;
    this.pending = '';
    let index = 0;
    while (index < input.length) {
      const char = input[index] ?? '';
      if (char === ESC) {
        // CSI: ESC [ parameters final-byte. An incomplete one waits for the next write.
        const rest = input.slice(index);
        const csi = /^\[([0-9;?]*)([@-~])?/.exec(rest.slice(1));
        if (rest === ESC || (csi && csi[2] === undefined && csi[0].length === rest.length - 1)) {
          this.pending = rest;
          return;
        }
        if (csi?.[2] === undefined) {
          index += 1; // another kind of escape: what follows reads as plain text
          continue;
        }
        this.control(csi[2], csi[1] ?? '');
        index += 1 + csi[0].length;
        continue;
      }
      if (char === '\r') this.column = 0;
      else if (char === '\n') this.moveTo(this.row + 1);
      else if (char === '\b') this.column = Math.max(0, this.column - 1);
      else if (char === '\t') this.put(' '.repeat(8 - (this.column % 8)));
      else if (char >= ' ') this.put(char);
      index += 1;
    }
  }

  /** The screen's lines, trailing spaces and the empty last line (the cursor's) left out. */
  lines(): string[] {
    const lines = this.rows.map((line) => line.trimEnd());
    while (lines.length > 0 && lines.at(-1) === '') lines.pop();
    return lines;
  }

  private control(final: string, parameters: string): void {
    const count = Math.max(1, Number(parameters.split(';')[0]) || 1);
    switch (final) {
      case 'F': // cursor to the start of a line above
        this.row = Math.max(0, this.row - count);
        this.column = 0;
        break;
      case 'A':
        this.row = Math.max(0, this.row - count);
        break;
      case 'J': // erase from the cursor to the end of the screen
        if (parameters === '' || parameters === '0') {
          this.rows.splice(this.row + 1);
          this.rows[this.row] = (this.rows[this.row] ?? '').slice(0, this.column);
        }
        break;
      case 'K': // erase to the end of the line
        if (parameters === '' || parameters === '0')
          this.rows[this.row] = (this.rows[this.row] ?? '').slice(0, this.column);
        break;
      default: // colours and modes change nothing in the text
        break;
    }
  }

  private moveTo(row: number): void {
    this.row = row;
    while (this.rows.length <= row) this.rows.push('');
  }

  private put(text: string): void {
    const line = (this.rows[this.row] ?? '').padEnd(this.column);
    this.rows[this.row] = line.slice(0, this.column) + text + line.slice(this.column + text.length);
    this.column += text.length;
  }
}
