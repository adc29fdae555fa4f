import { runPage } from './browser-page.ts'
import { libStorageUploader } from './lib-storage-upload.ts'

void runPage((body, { target, partSize, queueSize }) => libStorageUploader(target, partSize, queueSize)(body))
