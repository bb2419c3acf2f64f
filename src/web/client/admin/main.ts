/** The staff dashboard at /admin/ (C14, docs/console.md): a small single-page app over the admin API. */
import './main.css'
import { pageContext } from '../lib/page.ts'
import { useLanguage } from './strings.ts'
import { startApp } from './app.ts'

const page = pageContext()
useLanguage(page.language)
startApp(page)
