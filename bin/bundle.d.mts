// Types of bin/bundle.mjs for the TypeScript that imports it (its tests, bench/).
export declare const ENTRY_POINTS: Record<string, string>;
export declare function sourceStamp(root: string): string;
export declare function buildBundles(root: string, outDir: string, only?: string[]): Promise<void>;
export declare function asciiOnly(text: string): string;
export declare const BUNDLE_OPTIONS: {
  readonly bundle: true;
  readonly splitting: true;
  readonly format: 'esm';
  readonly platform: 'node';
  readonly target: 'node22';
  readonly outExtension: { readonly '.js': '.mjs' };
  readonly sourcemap: 'linked';
  readonly banner: { readonly js: string };
};
