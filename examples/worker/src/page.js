// The page, in plain JavaScript: each picked file goes straight to storage, the upload API at
// /api/s3-upload (this worker) granting it, one row per file. build.js bundles it into public/page.js.
import { upload } from 'updraft-s3'

const input = /** @type {HTMLInputElement} */ (document.querySelector('input[type=file]'))
const list = /** @type {HTMLUListElement} */ (document.querySelector('ul'))

input.addEventListener('change', () => {
  for (const file of input.files ?? []) {
    const row = list.appendChild(document.createElement('li'))
    /** @param {string} status @param {string} text */
    const show = (status, text) => {
      row.dataset.status = status
      row.textContent = `${file.name}: ${text}`
    }
    show('uploading', '0%')
    upload(file, {
      onProgress: ({ loaded, total }) => show('uploading', `${Math.round((100 * loaded) / total)}%`),
    }).then(
      (result) => {
        row.dataset.key = result.key
        show('done', `stored as ${result.key}`)
      },
      (error) => show('error', error.message),
    )
  }
  input.value = ''
})
