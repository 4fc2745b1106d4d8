// One way to say what is wrong with a file or flags an operator wrote: each issue names its field.
import type { z } from 'zod';

export function describeIssues(error: z.ZodError, source: string): string {
  const lines = error.issues.slice(0, 20).map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
    return `  ${field}: ${issue.message}`;
  });
  return `${source} is not valid:\n${lines.join('\n')}`;
}
