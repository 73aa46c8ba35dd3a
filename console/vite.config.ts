import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the gateway at /console; every asset is bundled (no request leaves the origin).
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, chunkSizeWarningLimit: 1024 },
});
