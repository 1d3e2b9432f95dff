//! The review page's shell in the report's style, in English; `review_page.js` fills it
//! from `/api/state` (texts set as text, never as markup).

use rageval_report::{escape_html as e, html_document};

use crate::review_app::ReviewSession;

/// Style for the page's own parts, beside the report's sheet.
const STYLE: &str = "<style>\
    .choices { display: flex; gap: 8px; flex-wrap: wrap; margin: 12px 0; }\
    .choices button { font-size: 16px; }\
    .choices button[aria-pressed=true] { outline: 3px solid var(--fg); }\
    button:focus-visible { outline: 3px solid var(--fg); outline-offset: 2px; }\
    nav.items { display: flex; gap: 8px; margin: 12px 0; }\
    textarea, input[type=text] { width: 100%; font: inherit; }\
    #contexts { max-height: 45vh; overflow-y: auto; }\
    </style>";

/// The page's shell for `session`.
pub(crate) fn render(session: &ReviewSession) -> String {
    let body = format!(
        "{STYLE}<main id=\"review\" lang=\"en\" data-state=\"loading\" data-position=\"0\">\n\
         <h1>Review <code>{}</code> <span class=\"muted\">{}</span></h1>\n\
         <p id=\"keys\">Keys: a accept · e edit the reference · r reject with a reason · \
         n or → next · b or ← back · in a form, Ctrl+Enter saves and Esc cancels</p>\n\
         <p id=\"progress\" aria-live=\"polite\">Loading…</p>\n\
         <noscript><p class=\"error\">This page needs JavaScript to save decisions.</p></noscript>\n\
         <article id=\"item\" aria-labelledby=\"question-heading\">\n\
         <p id=\"category\" class=\"muted\"></p>\n\
         <p id=\"failed-gates\" class=\"error\" hidden></p>\n\
         <section id=\"history\" hidden><h2>Conversation so far</h2><ol id=\"history-turns\" class=\"contexts\"></ol></section>\n\
         <h2 id=\"question-heading\">Question</h2><p id=\"question\" class=\"text\"></p>\n\
         <h2>Reference answer</h2><p id=\"reference\" class=\"text\"></p>\n\
         <h2>Key points</h2><ul id=\"key-points\"></ul>\n\
         <h2>Source chunks</h2><ol id=\"contexts\" class=\"contexts\"></ol>\n</article>\n\
         <section class=\"panel\" aria-labelledby=\"decision-heading\">\
         <h2 id=\"decision-heading\">Your decision</h2>\n\
         <div class=\"choices\" role=\"group\" aria-labelledby=\"decision-heading\">\
         <button type=\"button\" data-decision=\"accept\" aria-pressed=\"false\">a · accept</button>\
         <button type=\"button\" data-decision=\"edit\" aria-pressed=\"false\">e · edit</button>\
         <button type=\"button\" data-decision=\"reject\" aria-pressed=\"false\">r · reject</button></div>\n\
         <form id=\"edit-form\" hidden><label>Reference<textarea id=\"edit-reference\" rows=\"4\"></textarea></label>\
         <label>Question<input type=\"text\" id=\"edit-question\"></label>\
         <button type=\"submit\">Save edit</button></form>\n\
         <form id=\"reject-form\" hidden><label>Reason<input type=\"text\" id=\"reject-reason\"></label>\
         <button type=\"submit\">Save rejection</button></form>\n\
         <p id=\"status\" role=\"status\" aria-live=\"polite\"></p>\n\
         <nav class=\"items\" aria-label=\"items\"><button type=\"button\" id=\"back\">← Back (b)</button>\
         <button type=\"button\" id=\"next\">Next (n) →</button></nav></section>\n\
         <section id=\"done\" hidden><h2 id=\"done-heading\"></h2><p>The decisions are in \
         <code id=\"done-file\"></code>. Rates and the final set:</p><pre id=\"done-command\"></pre></section>\n\
         </main>\n<script src=\"/review.js\"></script>\n",
        e(&session.set.path.display().to_string()),
        e(&session.reviewer),
    );
    html_document("rageval: review a test set", &body)
}
