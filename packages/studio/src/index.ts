export type { StudioAsset } from './assets.js'
export { studioAssets } from './assets.js'
export { renderSessionHtml, scriptJson } from './export.js'
