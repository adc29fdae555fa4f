import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// `npm run build` writes the page to dist/, which server.js serves. Under `npm run dev` Vite serves
// the page and hands the upload API to server.js (run `npm start` beside it): without the proxy the
// page's POST /api/s3-upload reaches Vite and gets a 404.
export default defineConfig({
  plugins: [react()],
  server: { proxy: { '/api/s3-upload': `http://localhost:${process.env.PORT ?? 3000}` } },
})
