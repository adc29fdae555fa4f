import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { Uploads } from './Uploads.tsx'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Uploads />
  </StrictMode>,
)
