package files_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A notebook as Jupyter writes one: one space of indent a level, keys
// sorted, texts as lists of lines; PNG is the figure's.
func notebookJSON(pngB64 string) string {
	return `{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Sales\n",
    "A look at the numbers."
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "loaded 3 rows\n"
     ]
    },
    {
     "data": {
      "text/plain": [
       "42"
      ]
     },
     "execution_count": 1,
     "metadata": {},
     "output_type": "execute_result"
    }
   ],
   "source": [
    "print('loaded 3 rows')\n",
    "6 * 7"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 2,
   "metadata": {},
   "outputs": [
    {
     "data": {
      "image/png": "` + pngB64 + `",
      "text/plain": [
       "<Figure size 640x480 with 1 Axes>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    },
    {
     "ename": "ZeroDivisionError",
     "evalue": "division by zero",
     "output_type": "error",
     "traceback": [
      "\u001b[0;31mZeroDivisionError\u001b[0m                         Traceback (most recent call last)",
      "\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"
     ]
    }
   ],
   "source": [
    "plt.plot([1, 2])\n",
    "1 / 0"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "metadata": {},
   "outputs": [],
   "source": [
    "x = 1"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`
}

func tinyPNG(t *testing.T) string {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// Issue 22 §2: read renders a notebook for a model: numbered cells, their
// sources, outputs as text (colour codes gone), figures as images; offset
// and limit page by cells. A .ipynb that is not a notebook is shown as
// the text it is.
func TestReadNotebook(t *testing.T) {
	h := newHarness(t)
	img := tinyPNG(t)
	h.put("sales.ipynb", notebookJSON(img))
	res := h.call("read", map[string]any{"path": "sales.ipynb"})
	text := mcp.GetTextFromContent(res.Content[0])
	for _, want := range []string{
		"sales.ipynb: Jupyter notebook (nbformat 4, python), 4 cells (3 code, 1 markdown)",
		"── cell 1 · markdown ──\n# Sales\nA look at the numbers.\n",
		"── cell 2 · code · In [1] ──\nprint('loaded 3 rows')\n6 * 7\n[stdout]\nloaded 3 rows\n[Out [1]]\n42\n",
		"── cell 3 · code · In [2] ──\nplt.plot([1, 2])\n1 / 0\n[display: image/png image, ",
		"[error: ZeroDivisionError: division by zero]\nZeroDivisionError                         Traceback",
		"── cell 4 · code · not run ──\nx = 1",
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\x1b[") || strings.Contains(text, `"cell_type"`) {
		t.Fatalf("raw JSON or colour codes in:\n%s", text)
	}
	var images int
	for _, c := range res.Content {
		if im, ok := c.(mcp.ImageContent); ok {
			images++
			if im.MIMEType != "image/png" || im.Data != img {
				t.Fatalf("image %s %q", im.MIMEType, im.Data[:min(20, len(im.Data))])
			}
		}
	}
	if images != 1 {
		t.Fatalf("%d images, want 1", images)
	}
	page := h.ok("read", map[string]any{"path": "sales.ipynb", "offset": 2, "limit": 1})
	if !strings.Contains(page, "── cell 2") || strings.Contains(page, "── cell 1") || strings.Contains(page, "── cell 3") ||
		!strings.Contains(page, "showing cells 2-2 of 4; call read with offset 3 to continue") {
		t.Fatalf("page:\n%s", page)
	}
	past := h.ok("read", map[string]any{"path": "sales.ipynb", "offset": 9})
	if !strings.Contains(past, "offset 9 is past the last cell of sales.ipynb, which has 4 cells") {
		t.Fatalf("past the end: %s", past)
	}
	h.put("broken.ipynb", "{\"cells\": [\n")
	if got := h.ok("read", map[string]any{"path": "broken.ipynb"}); !strings.Contains(got, "1\t{\"cells\": [") {
		t.Fatalf("a broken notebook is not shown as text: %s", got)
	}
}
