/**
 * soma-jupyterlab: registers the Soma language with JupyterLab's editors and
 * a `Soma` file type for `*.cell` files, with the kernel's logo as its icon.
 *
 * Notebook cells find the language through the kernel's language_info
 * (`codemirror_mode: "soma"`, mimetype `text/x-soma`); the file editor
 * through the `.cell` extension.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { LabIcon } from '@jupyterlab/ui-components';

import logo from '../../kernelspec/soma/logo-svg.svg';
import { soma } from './language';

/** The `Soma` file type's icon: the kernel's logo. */
export const somaIcon = new LabIcon({ name: 'soma-jupyterlab:logo', svgstr: logo });

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'soma-jupyterlab:plugin',
  description: 'The Soma language in CodeMirror 6 and a Soma file type for .cell files.',
  autoStart: true,
  requires: [IEditorLanguageRegistry],
  activate: (app: JupyterFrontEnd, languages: IEditorLanguageRegistry): void => {
    languages.addLanguage({
      name: 'soma',
      displayName: 'Soma',
      alias: ['Soma'],
      mime: 'text/x-soma',
      extensions: ['cell'],
      support: soma()
    });
    app.docRegistry.addFileType({
      name: 'soma',
      displayName: 'Soma',
      extensions: ['.cell'],
      mimeTypes: ['text/x-soma'],
      icon: somaIcon,
      contentType: 'file',
      fileFormat: 'text'
    });
  }
};

export default plugin;
