//! Loaders on documents written the way real tools write them: a PDF with a CID font,
//! Identity-H encoding and a ToUnicode map (what office suites emit for Chinese text, as in
//! the kids-coding report), compressed content streams and two pages; a DOCX zip; HTML;
//! Markdown; plain text. Then all five in one index, each found by a Chinese query. Then
//! documents as users have them: a Chromium-printed Chinese PDF whose text layer uses radical
//! code points, a GBK text file, a file in no encoding, an empty file.

use std::io::Write;
use std::path::{Path, PathBuf};

use rageval_sources::local::{Content, DocumentKind, FileOutcome, LocalIndex, expand_inputs, load};
use rageval_sources::{IndexBuilder, Splitter};

use super::fixtures::BigramEmbedder;

const PDF_PAGES: [&[&str]; 2] = [
    &[
        "少儿编程教育",
        "行业发展趋势报告",
        "多鲸教育研究院 2024 年 1 月",
    ],
    &[
        "2024 年少儿编程市场规模约为 488 亿元",
        "渗透率约 5%，2027 年规模约 686 亿元",
    ],
];

/// Text without whitespace: extractors differ in the spaces and line breaks they put
/// between glyphs, never in the glyphs.
fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn pdf_with_cid_font_and_tounicode_map_reads_as_chinese_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, cjk_pdf(&PDF_PAGES)).unwrap();
    let doc = load(&path).unwrap();
    assert_eq!(doc.kind, DocumentKind::Pdf);
    let Content::Text(text) = &doc.content else {
        panic!()
    };
    let pages: Vec<&str> = text.split("\n\n").collect();
    assert!(pages.len() >= 2, "{text:?}");
    assert_eq!(
        squeeze(text),
        squeeze(&PDF_PAGES.concat().concat()),
        "{text:?}"
    );
    assert!(
        squeeze(pages.last().unwrap()).contains("488亿元"),
        "{text:?}"
    );

    std::fs::write(&path, b"%PDF-1.7\n1 0 obj garbage\n%%EOF").unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(err.starts_with(&path.display().to_string()), "{err}");
}

/// `kangxi-radicals.pdf` was printed by Chromium 156 (Debian 12's `chromium` package,
/// `chromium --headless --no-pdf-header-footer --print-to-pdf=kangxi-radicals.pdf
/// kangxi-radicals.html`) from the HTML file beside it, in Noto Sans CJK SC (Debian's
/// `fonts-noto-cjk` 20220127, SIL Open Font License: Chromium embeds the used glyphs only, as
/// Type 3 fonts). Its text layer maps 儿 人 工 手 力 to Kangxi radicals (U+2F09 U+2F08 U+2F2F
/// U+2F3F U+2F12) and 长 to the CJK Radicals Supplement's U+2ED3, as PDFs printed by browsers
/// and office suites with this font do.
fn kangxi_pdf() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kangxi-radicals.pdf")
}

#[tokio::test]
async fn regression_chinese_pdf_with_radical_code_points_is_found_by_its_ideographs() {
    let doc = load(&kangxi_pdf()).unwrap();
    let Content::Text(text) = &doc.content else {
        panic!()
    };
    assert!(
        squeeze(text).contains("少儿编程教育：人工智能时代，家长关注儿童的动手能力。"),
        "{text:?}"
    );
    assert!(
        !text.chars().any(|c| ('\u{2E80}'..='\u{2FDF}').contains(&c)),
        "{text:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let mut builder = IndexBuilder::new(Splitter::default());
    builder.add_file(&kangxi_pdf(), "kangxi.pdf").unwrap();
    let out = dir.path().join("idx");
    builder
        .write(&out, false, None::<&BigramEmbedder>)
        .await
        .unwrap();
    let index = LocalIndex::open(&out).unwrap();
    for query in ["少儿", "家长", "人工智能", "动手能力", "少⼉"] {
        let hits = index.search_bm25(query, 3).unwrap();
        assert_eq!(hits.len(), 1, "{query}");
    }
}

#[tokio::test]
async fn gbk_text_is_indexed_undecodable_files_skipped_and_empty_files_counted() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let sentence = "家长对少儿编程教育的认知程度逐年提高，市场规模约为四百八十八亿元。";
    let (gbk, _, unmappable) = encoding_rs::GBK.encode(sentence);
    assert!(!unmappable);
    assert!(std::str::from_utf8(&gbk).is_err());
    let files = [
        write("gbk.txt", &gbk),
        write(
            "image.txt",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01",
        ),
        write("empty.md", b""),
        write("blank.txt", b" \r\n\r\n"),
    ];
    let mut builder = IndexBuilder::new(Splitter::default());
    let outcomes: Vec<FileOutcome> = files
        .iter()
        .map(|f| builder.add_file(f, &f.display().to_string()).unwrap())
        .collect();
    assert_eq!(
        outcomes[0],
        FileOutcome::Indexed {
            chunks: 1,
            encoding: Some("GBK")
        }
    );
    assert!(
        matches!(&outcomes[1], FileOutcome::Skipped { reason } if reason.contains("binary")),
        "{outcomes:?}"
    );
    assert_eq!(outcomes[2..], [FileOutcome::Empty, FileOutcome::Empty]);
    assert_eq!(builder.chunks()[0].text, sentence);

    let out = dir.path().join("idx");
    let manifest = builder
        .write(&out, false, None::<&BigramEmbedder>)
        .await
        .unwrap();
    let chunks: Vec<usize> = manifest.documents.iter().map(|d| d.chunks).collect();
    assert_eq!(chunks, [1, 0, 0]);
    assert_eq!(manifest.documents[0].encoding.as_deref(), Some("GBK"));
    assert_eq!(manifest.skipped.len(), 1);
    assert!(manifest.skipped[0].path.ends_with("image.txt"));
    let index = LocalIndex::open(&out).unwrap();
    let hits = index.search_bm25("少儿编程的市场规模", 3).unwrap();
    assert_eq!(hits.len(), 1);
}

#[test]
fn docx_html_markdown_and_text_load_their_visible_text() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_corpus(dir.path());
    let expected = [
        (
            "policy.docx",
            "国家战略政策推动少儿编程教育由兴趣课向基础学科转变",
        ),
        ("market.html", "线上线下融合的少儿编程机构 OMO 模式"),
        ("ai.md", "人工智能技术创新为少儿编程带来新的课程形态"),
        ("notes.txt", "家长对编程教育的认知程度逐年提高"),
    ];
    for (name, sentence) in expected {
        let doc = load(&dir.path().join(name)).unwrap();
        let Content::Text(text) = doc.content else {
            panic!()
        };
        assert!(text.contains(sentence), "{name}: {text:?}");
        assert!(
            !text.contains('<') && !text.contains("**"),
            "{name}: markup left: {text:?}"
        );
    }
    assert_eq!(files.len(), 5);
    let err = load(&dir.path().join("policy.docx").with_extension("csv")).unwrap_err();
    assert!(err.to_string().contains("unsupported file type"), "{err}");
}

#[tokio::test]
async fn every_format_in_one_index_is_found_by_a_chinese_query() {
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path());
    let files = expand_inputs(&[dir.path().to_owned()]).unwrap();
    assert_eq!(files.len(), 5, "{files:?}");
    let mut builder = IndexBuilder::new(Splitter::default());
    for file in &files {
        builder.add(&load(&file.path).unwrap()).unwrap();
    }
    let out = dir.path().join("idx");
    let manifest = builder
        .write(&out, false, None::<&BigramEmbedder>)
        .await
        .unwrap();
    assert_eq!(manifest.documents.len(), 5);
    let index = LocalIndex::open(&out).unwrap();
    for (query, file) in [
        ("少儿编程市场规模有多大", "report.pdf"),
        ("国家政策如何影响编程教育", "policy.docx"),
        ("OMO模式是什么", "market.html"),
        ("人工智能带来什么课程形态", "ai.md"),
        ("家长的认知有什么变化", "notes.txt"),
    ] {
        let hits = index.search_bm25(query, 3).unwrap();
        let source = hits[0].fields["source"].as_str().unwrap();
        assert!(source.ends_with(file), "{query}: top hit from {source}");
    }
}

fn write_corpus(dir: &Path) -> Vec<PathBuf> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    vec![
        write("report.pdf", &cjk_pdf(&PDF_PAGES)),
        write("policy.docx", &docx(&[
            "政策环境",
            "国家战略政策推动少儿编程教育由兴趣课向基础学科转变，",
            "编程逐步纳入中小学教育体系 & 考试评价。",
        ])),
        write(
            "market.html",
            "<html><head><title>市场</title><script>var a='<p>脚本</p>';</script></head><body>\
             <h1>市场格局</h1><p>线上线下融合的少儿编程机构 <b>OMO</b> 模式&nbsp;逐渐成为主流。</p>\
             <ul><li>头部机构</li><li>区域机构</li></ul></body></html>"
                .as_bytes(),
        ),
        write(
            "ai.md",
            "# 技术趋势\n\n**人工智能**技术创新为少儿编程带来新的课程形态，\n例如[AI 助教](https://example.invalid)。\n".as_bytes(),
        ),
        write("notes.txt", "用户调研\n\n家长对编程教育的认知程度逐年提高。\r\n".as_bytes()),
    ]
}

/// A DOCX with one paragraph per string.
fn docx(paragraphs: &[&str]) -> Vec<u8> {
    let mut body = String::new();
    for p in paragraphs {
        let escaped = p.replace('&', "&amp;").replace('<', "&lt;");
        body.push_str(&format!(
            "<w:p><w:r><w:t xml:space=\"preserve\">{escaped}</w:t></w:r></w:p>"
        ));
    }
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
         <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}<w:sectPr/></w:body></w:document>"
    );
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let parts = [
        ("[Content_Types].xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>".to_owned()),
        ("_rels/.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/></Relationships>".to_owned()),
        ("word/document.xml", document),
    ];
    for (name, content) in parts {
        zip.start_file(name, options).unwrap();
        zip.write_all(content.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// A PDF whose text is in a Type0 font with Identity-H encoding: glyphs are 2-byte CIDs and
/// only the ToUnicode CMap says which characters they are — how Chinese PDFs are written.
/// Content streams are deflate-compressed; one page per slice of lines.
pub fn cjk_pdf(pages: &[&[&str]]) -> Vec<u8> {
    let mut chars: Vec<char> = pages
        .iter()
        .flat_map(|p| p.iter())
        .flat_map(|l| l.chars())
        .collect();
    chars.sort_unstable();
    chars.dedup();
    let cid = |c: char| chars.binary_search(&c).unwrap() + 1;
    let mut cmap = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    for block in chars.chunks(100) {
        cmap.push_str(&format!("{} beginbfchar\n", block.len()));
        for &c in block {
            let mut units = [0u16; 2];
            let hex: String = c
                .encode_utf16(&mut units)
                .iter()
                .map(|u| format!("{u:04X}"))
                .collect();
            cmap.push_str(&format!("<{:04X}> <{hex}>\n", cid(c)));
        }
        cmap.push_str("endbfchar\n");
    }
    cmap.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");

    let mut objects: Vec<Vec<u8>> = Vec::new();
    let first_page = 7;
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", first_page + 2 * i))
        .collect();
    objects.push(b"<< /Type /Catalog /Pages 2 0 R >>".to_vec());
    objects.push(
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        )
        .into_bytes(),
    );
    objects.push(b"<< /Type /Font /Subtype /Type0 /BaseFont /NotoSansSC-Regular /Encoding /Identity-H /DescendantFonts [4 0 R] /ToUnicode 5 0 R >>".to_vec());
    objects.push(b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /NotoSansSC-Regular /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 6 0 R /DW 1000 /CIDToGIDMap /Identity >>".to_vec());
    objects.push(stream(cmap.as_bytes()));
    objects.push(b"<< /Type /FontDescriptor /FontName /NotoSansSC-Regular /Flags 4 /FontBBox [-1000 -300 3000 1200] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 733 /StemV 80 >>".to_vec());
    for (i, lines) in pages.iter().enumerate() {
        let mut content = String::from("BT\n/F1 12 Tf\n16 TL\n50 780 Td\n");
        for line in lines.iter() {
            let hex: String = line.chars().map(|c| format!("{:04X}", cid(c))).collect();
            content.push_str(&format!("<{hex}> Tj\nT*\n"));
        }
        content.push_str("ET\n");
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            first_page + 2 * i + 1
        ).into_bytes());
        objects.push(stream(content.as_bytes()));
    }

    let mut pdf = b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(object);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    pdf
}

/// A deflate-compressed stream object.
fn stream(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).unwrap();
    let compressed = encoder.finish().unwrap();
    let mut out = format!(
        "<< /Length {} /Filter /FlateDecode >>\nstream\n",
        compressed.len()
    )
    .into_bytes();
    out.extend_from_slice(&compressed);
    out.extend_from_slice(b"\nendstream");
    out
}

/// Regression (issue 25 item 3): chunk ids carried the path as typed, so one corpus indexed
/// from two places gave two sets of ids, each with a home directory inside. Ids name each
/// file below the folder given; a file given alone by its name; two files that would share
/// a name are refused, naming both.
#[tokio::test]
async fn chunk_ids_name_files_below_the_folder_given_wherever_it_lies() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for root in [dir.path().join("corpus"), dir.path().join("home/me/copy")] {
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(
            root.join("sub/ai.md"),
            "人工智能技术创新为少儿编程带来新的课程形态。",
        )
        .unwrap();
        std::fs::write(root.join("notes.txt"), "家长对编程教育的认知程度逐年提高。").unwrap();
        let files = expand_inputs(std::slice::from_ref(&root)).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["notes.txt", "sub/ai.md"]);
        let mut builder = IndexBuilder::new(Splitter::default());
        for file in &files {
            builder.add_file(&file.path, &file.name).unwrap();
        }
        let out = root.join("idx");
        builder
            .write(&out, false, None::<&BigramEmbedder>)
            .await
            .unwrap();
        let hits = LocalIndex::open(&out)
            .unwrap()
            .search_bm25("人工智能课程形态", 1)
            .unwrap();
        assert_eq!(hits[0].id, "sub/ai.md#0");
        assert_eq!(hits[0].fields["source"], "sub/ai.md");
        seen.push(hits[0].id.clone());
    }
    assert_eq!(seen[0], seen[1]);

    let alone = expand_inputs(&[dir.path().join("corpus/notes.txt")]).unwrap();
    assert_eq!(alone[0].name, "notes.txt");
    let twice = expand_inputs(&[
        dir.path().join("corpus/notes.txt"),
        dir.path().join("home/me/copy/notes.txt"),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        twice.contains("copy/notes.txt") && twice.contains("corpus/notes.txt"),
        "{twice}"
    );
}

/// Regression (issue 25 item 8): a line the page wrapped inside a Chinese word came out as
/// `重要分 支`, which no tokenizer reads as `分支`. Breaks between two ideographs go; the
/// break after a full stop stays.
#[test]
fn a_pdf_line_wrapped_inside_a_chinese_word_reads_as_one_word() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wrapped.pdf");
    let page: &[&str] = &[
        "编程教育是素质教育的重要分",
        "支。",
        "2024 年市场规模约为",
        "488 亿元",
    ];
    std::fs::write(&path, cjk_pdf(&[page])).unwrap();
    let Content::Text(text) = load(&path).unwrap().content else {
        panic!()
    };
    assert!(text.contains("重要分支。"), "{text:?}");
    assert!(!text.contains("支。2024"), "{text:?}");
}
