import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// `npm run build` writes the page to dist/, which server.js serves.
export default defineConfig({ plugins: [react()] })
