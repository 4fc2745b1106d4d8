// Types of bin/bundle.mjs for the TypeScript that imports it (its tests).
export declare const ENTRY_POINTS: Record<string, string>;
export declare function sourceStamp(root: string): string;
export declare function buildBundles(root: string, outDir: string, only?: string[]): Promise<void>;
export declare function asciiOnly(text: string): string;
