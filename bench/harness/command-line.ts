// The benchmarks' command lines: `--name value` and `--flag`, and nothing they do not know.

/** `--name value` and `--flag` on the command line. */
export class CommandLine {
  constructor(private readonly argv: readonly string[] = process.argv.slice(2)) {}

  has(name: string): boolean {
    return this.argv.includes(name);
  }

  string(name: string): string | undefined {
    const index = this.argv.indexOf(name);
    if (index < 0) return undefined;
    const value = this.argv[index + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(`${name} takes a value`);
    return value;
  }

  integer(name: string, fallback: number, min = 1): number {
    const raw = this.string(name);
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min)
      throw new Error(`${name} takes an integer of at least ${min}`);
    return value;
  }

  /** A flag whose value may be left out (`--json` or `--json FILE`): the value, if given. */
  optionalValue(name: string): string | undefined {
    const index = this.argv.indexOf(name);
    const value = index < 0 ? undefined : this.argv[index + 1];
    return value !== undefined && !value.startsWith('--') ? value : undefined;
  }

  /** A comma-separated list. */
  list(name: string): string[] | undefined {
    return this.string(name)
      ?.split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
  }

  /** A comma-separated list of names from `known` (all of them when left out); refuses others. */
  choices<T extends string>(name: string, known: readonly T[], what: string): T[] {
    return (this.list(name) ?? [...known]).map((item) => {
      if (!(known as readonly string[]).includes(item))
        throw new Error(`unknown ${what} ${item}; known: ${known.join(',')}`);
      return item as T;
    });
  }

  /** Refuses anything not in `known` (a typo must not run a 10-minute benchmark with defaults). */
  only(known: readonly string[]): void {
    for (const [index, arg] of this.argv.entries()) {
      if (!arg.startsWith('--')) {
        const previous = this.argv[index - 1];
        if (previous?.startsWith('--') && known.includes(previous)) continue;
      }
      if (!known.includes(arg))
        throw new Error(`unknown argument ${arg}; known: ${known.join(' ')}`);
    }
  }
}
