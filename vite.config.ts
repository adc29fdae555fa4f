import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

const fromHere = (path: string) => fileURLToPath(new URL(path, import.meta.url))

// The demo page. `npx vite` serves it with /api proxied to the `npm start` server;
// `npx vite build` writes dist/demo, which that server serves as static files.
export default defineConfig({
  root: fromHere('./demo/page'),
  plugins: [react()],
  build: {
    outDir: fromHere('./dist/demo'),
    emptyOutDir: true,
  },
  server: {
    proxy: { '/api': 'http://localhost:3000' },
  },
})
