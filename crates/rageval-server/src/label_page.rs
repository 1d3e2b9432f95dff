//! The labelling page in the report's style: a shell rendered here in English or Chinese,
//! which `label_page.js` fills from `/api/state` (texts set as text, never as markup). The
//! page's words are one table, [`TEXT`], used by the shell and handed to the script.

use std::fmt::Write as _;

use rageval_report::{escape_html as e, html_document};
use serde_json::{Map, Value};

use crate::label::{LabelScale, PageLanguage, Session};

/// Every word the page shows: key, English, Chinese. `{name}` marks a value the script
/// fills in.
const TEXT: &[(&str, &str, &str)] = &[
    ("title", "Label", "标注"),
    ("measured", "What the judge measured", "评判的指标"),
    (
        "keys_graded",
        "Keys: 1–5 your grade (1 worst, 5 best) · n or → next · b or ← back",
        "按键：1–5 打分（1 最差，5 最好）· n 或 → 下一条 · b 或 ← 上一条",
    ),
    (
        "keys_binary",
        "Keys: y good · n not good · → next · b or ← back",
        "按键：y 合格 · n 不合格 · → 下一条 · b 或 ← 上一条",
    ),
    ("question", "Question", "问题"),
    ("contexts", "Contexts", "检索到的上下文"),
    ("answer", "Answer", "回答"),
    ("reference", "Reference", "参考答案"),
    ("your_label", "Your label", "你的标注"),
    ("yes", "yes", "合格"),
    ("no", "no", "不合格"),
    ("back", "← Back (b)", "← 上一条 (b)"),
    ("next", "Next (n) →", "下一条 (n) →"),
    ("next_binary", "Next (→)", "下一条 (→)"),
    ("judge", "The judge said", "评判模型的结论"),
    (
        "judge_hidden",
        "The judge's verdict is shown once your label is saved.",
        "保存你的标注后才显示评判结果。",
    ),
    (
        "progress",
        "Item {position} of {total} · {labelled} labelled",
        "第 {position} 条，共 {total} 条 · 已标注 {labelled} 条",
    ),
    ("saved", "Saved: {label}", "已保存：{label}"),
    ("not_saved", "Not saved: {error}", "未保存：{error}"),
    ("score", "Score {value}", "得分 {value}"),
    ("undefined", "Undefined: {reason}", "无法计算：{reason}"),
    ("failed", "Failed: {error}", "失败：{error}"),
    ("none", "(none)", "（无）"),
    ("stratum", "Stratum: {stratum}", "分层：{stratum}"),
    (
        "done",
        "All {total} items have a label.",
        "全部 {total} 条都已标注。",
    ),
    (
        "done_file",
        "The labels are in {file}. Read them with:",
        "标注保存在 {file}。可以这样使用：",
    ),
    (
        "noscript",
        "This page needs JavaScript to save labels.",
        "此页面需要启用 JavaScript 才能保存标注。",
    ),
    ("loading", "Loading…", "加载中…"),
];

fn text(language: PageLanguage, key: &str) -> &'static str {
    TEXT.iter()
        .find(|(k, ..)| *k == key)
        .map_or("", |(_, en, zh)| match language {
            PageLanguage::En => en,
            PageLanguage::Zh => zh,
        })
}

/// The page's words in `language`, for the script.
pub(crate) fn script_text(language: PageLanguage) -> Map<String, Value> {
    TEXT.iter()
        .map(|(key, ..)| ((*key).to_owned(), Value::from(text(language, key))))
        .collect()
}

/// Style for the page's own parts, beside the report's sheet.
const STYLE: &str = "<style>\
    .choices { display: flex; gap: 8px; flex-wrap: wrap; margin: 12px 0; }\
    .choices button { min-width: 3em; font-size: 16px; }\
    .choices button[aria-pressed=true] { outline: 3px solid var(--fg); }\
    button:focus-visible { outline: 3px solid var(--fg); outline-offset: 2px; }\
    nav.items { display: flex; gap: 8px; margin: 12px 0; }\
    .panel { position: sticky; bottom: 0; background: var(--bg); border-top: 2px solid var(--line); padding: 0 0 4px; }\
    .panel h2 { margin-top: 8px; border: 0; }\
    #contexts { max-height: 50vh; overflow-y: auto; }\
    #judge { border: 1px solid var(--line); border-radius: 6px; padding: 0 12px 4px; max-height: 25vh; overflow-y: auto; }\
    </style>";

/// The page's shell for `session`.
pub(crate) fn render(session: &Session) -> String {
    let lang = session.language;
    let t = |key| text(lang, key);
    let code = match lang {
        PageLanguage::En => "en",
        PageLanguage::Zh => "zh",
    };
    let mut body = format!(
        "{STYLE}<main id=\"labelling\" lang=\"{code}\" data-state=\"loading\" data-position=\"0\">\n\
         <h1>{} <code>{}</code> <span class=\"muted\">{} · {}</span></h1>\n",
        e(t("title")),
        e(&session.metric),
        e(&session.run),
        e(&session.labeller)
    );
    if !session.formula.is_empty() {
        let _ = writeln!(
            body,
            "<p class=\"muted\">{}: {}</p>",
            e(t("measured")),
            e(&session.formula)
        );
    }
    let (keys, next) = match session.scale {
        LabelScale::Graded => ("keys_graded", "next"),
        LabelScale::Binary => ("keys_binary", "next_binary"),
    };
    let _ = write!(
        body,
        "<p id=\"keys\">{}</p>\n<p id=\"progress\" aria-live=\"polite\">{}</p>\n\
         <noscript><p class=\"error\">{}</p></noscript>\n\
         <article id=\"item\" aria-labelledby=\"question-heading\">\n\
         <p id=\"stratum\" class=\"muted\" hidden></p>\n\
         <h2 id=\"question-heading\">{}</h2><p id=\"question\" class=\"text\"></p>\n\
         <h2>{}</h2><p id=\"answer\" class=\"text\"></p>\n\
         <h2>{}</h2><p id=\"reference\" class=\"text\"></p>\n\
         <h2>{}</h2><ol id=\"contexts\" class=\"contexts\"></ol>\n</article>\n",
        e(t(keys)),
        e(t("loading")),
        e(t("noscript")),
        e(t("question")),
        e(t("answer")),
        e(t("reference")),
        e(t("contexts")),
    );
    let _ = write!(
        body,
        "<section class=\"panel\" aria-labelledby=\"label-heading\">\
         <h2 id=\"label-heading\">{}</h2>\n\
         <div class=\"choices\" role=\"group\" aria-labelledby=\"label-heading\">",
        e(t("your_label"))
    );
    match session.scale {
        LabelScale::Graded => {
            for grade in 1..=LabelScale::TOP_GRADE {
                let _ = write!(
                    body,
                    "<button type=\"button\" data-label=\"{grade}\" aria-pressed=\"false\">{grade}</button>"
                );
            }
        }
        LabelScale::Binary => {
            let _ = write!(
                body,
                "<button type=\"button\" data-label=\"true\" aria-pressed=\"false\">y · {}</button>\
                 <button type=\"button\" data-label=\"false\" aria-pressed=\"false\">n · {}</button>",
                e(t("yes")),
                e(t("no"))
            );
        }
    }
    let _ = write!(
        body,
        "</div>\n<p id=\"status\" role=\"status\" aria-live=\"polite\"></p>\n\
         <p id=\"judge-hidden\" class=\"muted\">{}</p>\n\
         <section id=\"judge\" aria-labelledby=\"judge-heading\" hidden>\
         <h2 id=\"judge-heading\">{}</h2><p id=\"judge-score\"></p><ul id=\"judge-verdicts\"></ul>\
         </section>\n\
         <nav class=\"items\" aria-label=\"items\"><button type=\"button\" id=\"back\">{}</button>\
         <button type=\"button\" id=\"next\">{}</button></nav></section>\n\
         <section id=\"done\" hidden><h2 id=\"done-heading\"></h2><p id=\"done-file\"></p>\
         <pre id=\"done-commands\"></pre></section>\n\
         </main>\n<script src=\"/label.js\"></script>\n",
        e(t("judge_hidden")),
        e(t("judge")),
        e(t("back")),
        e(t(next)),
    );
    html_document(
        &format!("rageval: {} {}", t("title"), session.metric),
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_has_both_languages_and_the_same_placeholders() {
        for (key, en, zh) in TEXT {
            assert!(!en.is_empty() && !zh.is_empty(), "{key}");
            let names = |s: &str| -> Vec<String> {
                s.split('{')
                    .skip(1)
                    .filter_map(|part| part.split_once('}').map(|(name, _)| name.to_owned()))
                    .collect()
            };
            assert_eq!(names(en), names(zh), "{key}");
        }
        assert_eq!(script_text(PageLanguage::Zh)["question"], "问题");
    }
}
