import { siteConfig } from './site-config.js'

export default siteConfig()
