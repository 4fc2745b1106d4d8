// Builds the console page into console/web/dist, which the console server serves.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Pages are small: one script and one style sheet, no source maps shipped.
    sourcemap: false,
    reportCompressedSize: false,
  },
});
